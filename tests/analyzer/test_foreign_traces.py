"""judge, gate, paths and interventions on traces of apps instrumented ONLY with OpenInference
or the official openai-v2 instrumentation (no groundtrace decorator), through the CLI.

The apps (:mod:`tests.support.foreign_rag`) answer bicycle-repair questions from six chunks
whose ids are the gold, with BM25 and the local OpenAI-compatible server as the model. What a
trace still lacks is named per trace, with the span of its convention that would carry it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.judge._cases import cases_from_traces
from groundtrace.analyzer.replay._endpoint import captured_call
from groundtrace.collectors import read_traces
from tests.support.foreign_rag import (
    CASES,
    CHUNKS,
    MODEL,
    openai_v2_app,
    openinference_app,
    reader,
    write_cases,
    write_path_cases,
)
from tests.support.openai_server import OpenAICompatServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

app = build_app()
APPS = ("openinference", "openai-v2")
_LINE = re.compile(r"^\[([^\]]+)\] ", re.M)


class Runs:
    """The traces of each app (good retrieval, and a candidate that skips the best chunk),
    the case file and the model server (kept up for endpoint replay)."""

    def __init__(self, root: Path, server: OpenAICompatServer) -> None:
        self.server = server
        self.cases = write_cases(root / "cases.jsonl")
        self.path_cases = write_path_cases(root / "path_cases.jsonl")
        url = server.base_url
        self.good = {
            "openinference": openinference_app(url, root / "oi.pb"),
            "openai-v2": openai_v2_app(url, root / "v2.pb"),
        }
        self.bad = {
            "openinference": openinference_app(url, root / "oi_bad.pb", skip=1),
            "openai-v2": openai_v2_app(url, root / "v2_bad.pb", skip=1),
        }
        self.no_documents = openai_v2_app(url, root / "v2_nodocs.pb", retrieval_span=False)
        self.app_requests = len(server.requests)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    with OpenAICompatServer(handler=reader) as server:
        yield Runs(tmp_path_factory.mktemp("foreign"), server)


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("name", APPS)
def test_judge_run_judges_every_trace(runs: Runs, name: str, tmp_path: Path) -> None:
    res = _cli("judge", "run", str(runs.good[name]), "--judge", "lexical", "--out",
               str(tmp_path), "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (summary["cases"], summary["not_judgeable"]) == (len(CASES), [])
    # the answers copy a context line: fully adherent, every one scored
    adherence = summary["metrics"]["adherence"]
    assert (adherence["scored"], adherence["mean"]) == (len(CASES), 1.0)
    judged = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    assert len(judged) == len(CASES)


def test_judge_names_what_a_trace_without_documents_lacks(runs: Runs) -> None:
    found, skipped = cases_from_traces(read_traces([str(runs.no_documents)]))
    assert found == [] and len(skipped) == len(CASES)
    for trace in skipped:
        (missing,) = trace.missing  # question and answer were read from the chat span
        assert not trace.applicable  # nothing grounds its answer: the judge does not apply
        assert missing.startswith("no retrieved documents or tool results recorded")
        assert "GenAI retrieval span with gen_ai.retrieval.documents" in missing


def test_openllmetry_trace_without_documents_is_judged_on_its_tool_result() -> None:
    from groundtrace.analyzer.judge import ContextSource
    from tests.support.instrumented import SCENARIOS

    (trace,) = SCENARIOS["openllmetry-decorators"]().traces
    (case,), skipped = cases_from_traces([trace])
    assert skipped == []
    # no retrieval span, but its @tool's result grounds the answer: an agent's context
    assert case.source is ContextSource.TOOL_RESULTS
    assert case.context == ('{"director": "Steven Spielberg"}',)


@pytest.mark.parametrize("name", APPS)
def test_gate_joins_by_question_and_blocks_the_regression(
    runs: Runs, name: str, tmp_path: Path
) -> None:
    res = _cli("gate", "run", "--baseline", str(runs.good[name]), "--candidate",
               str(runs.bad[name]), "--cases", str(runs.cases), "--out", str(tmp_path))  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert res.exit_code == 20, res.output
    assert report["baseline_case_level"]["counts"]["promote"] == len(CASES)
    assert report["case_level"]["counts"]["block"] == len(CASES)
    failed = {
        r["name"]: r["evidence"]
        for case in report["cases"]
        if case["case_id"] == "flat"
        for r in case["results"]
        if r["status"] == "fail"
    }
    assert failed == {"required_context": ["tube-patch"], "expected_terms": ["patch"]}
    joined = [n for n in report["notes"] if "joined to flat by question" in n]
    assert len(joined) == 2  # baseline and candidate


def test_paths_checks_the_tool_calls_of_an_openinference_app(runs: Runs, tmp_path: Path) -> None:
    good = _cli("paths", str(runs.good["openinference"]), "--cases", str(runs.path_cases),
                "--out", str(tmp_path / "good"), "--json")  # fmt: skip
    assert good.exit_code == 0, good.output
    report = json.loads(good.stdout)
    assert [c["status"] for c in report["cases"]] == ["pass"] * len(CASES)
    assert report["metrics"]["path_pass_rate"]["value"] == 1.0
    bad = _cli("paths", str(runs.bad["openinference"]), "--cases", str(runs.path_cases),
               "--out", str(tmp_path / "bad"), "--json")  # fmt: skip
    cases = json.loads(bad.stdout)["cases"]
    assert [c["status"] for c in cases] == ["param_error"] * len(CASES)
    assert cases[0]["issues"][0]["message"] == (
        "manual_page: argument 'chunk_id' = 'brake-pads' is not among ['tube-patch']"
    )


@pytest.mark.parametrize("name", APPS)
def test_interventions_replay_the_recorded_request(runs: Runs, name: str, tmp_path: Path) -> None:
    before = len(runs.server.requests)
    res = _cli("interventions", str(runs.good[name]), "--cases", str(runs.cases), "--endpoint",
               runs.server.base_url, "--model", MODEL, "--operators", "REMOVE,DUPLICATE,ZERO",
               "--out", str(tmp_path))  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["items"] == len(CASES) and summary["input"]["not_replayable"] == {}
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * len(CASES) and all(r["status"] == "ok" for r in rows)
    # each unit's request is the recorded one with the app's own [id] lines swapped
    sent = {}
    for req in runs.server.requests[before:]:
        system, user = (m["content"] for m in req.body["messages"])
        sent[(user, tuple(_LINE.findall(system)))] = system
    questions = {cid: q for cid, q, _, _ in CASES}
    texts = dict(CHUNKS)
    for row in rows:
        system = sent[(questions[row["case_id"]], tuple(row["evidence_ids"]))]
        assert system.startswith("Answer from the context only.\n\nContext:")
        assert system.endswith("\n\nBe brief.")
        for chunk_id in row["evidence_ids"]:
            assert f"[{chunk_id}] {texts[chunk_id]}" in system
    gold = {cid: g for cid, _, g, _ in CASES}
    for row in rows:
        answer = row["counterfactual"]["answer"]
        if row["operator"] == "REMOVE":  # the gold chunk the answer came from is gone
            assert row["target_id"] == gold[row["case_id"]]
            assert answer != row["original"]["answer"]
        elif row["operator"] == "ZERO":
            assert answer == "I do not know."
        else:
            assert answer == row["original"]["answer"]


def test_interventions_name_what_a_trace_without_documents_lacks(runs: Runs) -> None:
    for trace in read_traces([str(runs.no_documents)]):
        assert captured_call(trace) == (
            "no retrieved documents recorded (looked for a GenAI retrieval span with "
            "gen_ai.retrieval.documents): interventions need them"
        )


DOCS = [
    {"id": "a1", "title": "Tubes", "content": "patch the tube"},
    {"id": "b2", "title": "Pads", "content": "swap the pads"},
    {"id": "c3", "title": "Chain", "content": "oil the chain"},
]


def _prompt(docs: list[dict[str, str]]) -> list[dict[str, str]]:
    body = "\n\n".join(
        f"Document {d['id']} ({d['title']}):\n{d['content']}" for d in docs
    )  # fmt: skip
    return [{"role": "user", "content": f"Use these.\n\n{body}\n\nQuestion: how?"}]


def test_layout_renders_the_recorded_block_and_perturbed_ones() -> None:
    from groundtrace.analyzer.replay._layout import document_layout

    messages = _prompt(DOCS)
    layout = document_layout(messages, DOCS)
    assert not isinstance(layout, str)
    assert layout.ids == ("a1", "b2", "c3")
    assert layout.render(DOCS) == layout.block
    assert layout.block in messages[0]["content"]
    swapped = messages[0]["content"].replace(layout.block, layout.render([DOCS[2], DOCS[2]]))
    assert swapped == _prompt([DOCS[2], DOCS[2]])[0]["content"]
    emptied = messages[0]["content"].replace(layout.block, layout.render([]))
    assert "Document" not in emptied and emptied.endswith("Question: how?")


def test_layout_says_which_document_is_not_in_the_prompt() -> None:
    from groundtrace.analyzer.replay._layout import document_layout

    why = document_layout(_prompt(DOCS[:2]), DOCS)
    assert why == (
        "document 'c3' occurs 0 times in the recorded request's messages (endpoint replay "
        "needs each retrieved document's content verbatim, once)"
    )
    mixed = [
        {"role": "user", "content": "[a1] patch the tube\n(b2) swap the pads\n[c3] oil the chain"}
    ]
    assert "differs from one to the next" in str(document_layout(mixed, DOCS))
