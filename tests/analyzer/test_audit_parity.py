"""The audit has one way in: ``audit run`` (with or without ``--sources``) and ``analyze audit
--config`` make the same config and run it through the one driver, so on the same inputs they
write the same run and reports and exit alike (nothing measured 6, a call ceiling 5); the
licence example is data (its corpus files, a retriever named in the config) run that same
way; and the audit runs from inside a running event loop (``run_analysis_async``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import Result as CliResult
from typer.testing import CliRunner

from groundtrace.analyzer import DemoInputs, run_analysis, run_analysis_async
from groundtrace.analyzer.audit import ANALYSIS, AuditResult, Config, Source
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from groundtrace.collectors import read_traces
from groundtrace.examples.license_audit import audit as licence
from groundtrace.examples.license_audit.corpus import (
    QUESTIONS_FILE,
    SOURCES_FILE,
    audit_inputs,
    load_corpus,
)
from groundtrace.sdk import semconv as sc
from tests.analyzer.audit.test_audit_shape import ANSWERS, MUSEUMS, QUESTIONS
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

pytestmark = pytest.mark.timeout(600)

app = build_app()


def _invoke(*args: str) -> CliResult:
    return CliRunner().invoke(app, list(args))


def _analyze(config: dict[str, Any], out: Path, *more: str) -> CliResult:
    path = out.parent / f"{out.name}-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return _invoke("analyze", "audit", "--config", str(path), "--out", str(out), *more)


def _lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def museums(tmp_path: Path) -> Path:
    root = tmp_path / "museums"
    root.mkdir()
    rows = [{"id": k, "group": group, "text": text} for k, (group, text) in MUSEUMS.items()]
    _lines(root / "museums.jsonl", rows)
    _lines(root / "questions.jsonl", QUESTIONS)
    _lines(root / "absent.jsonl", [a | {"answer": "Not stated."} for a in ANSWERS])
    return root


def _corpus(museums: Path) -> dict[str, str]:
    return {
        "sources": str(museums / "museums.jsonl"),
        "questions": str(museums / "questions.jsonl"),
    }


def _run(folder: Path) -> dict[str, Any]:
    """run.json without what differs by nature (wall time, trace ids)."""
    found: dict[str, Any] = json.loads((folder / "run.json").read_bytes())
    found.pop("wall_seconds")
    for answer in found["answers"]:
        answer["trace_id"] = bool(answer["trace_id"])
    return found


def _report(folder: Path, name: str) -> str:
    text = (folder / name).read_text("utf-8")
    return re.sub(r"[0-9a-f]{32}", "<trace>", re.sub(r"\d+\.\d s", "<s>", text))


def _same(a: Path, b: Path) -> None:
    assert _run(a) == _run(b)
    for name in ("report.md", "report.html"):
        assert _report(a, name) == _report(b, name), name


def first_sentence(query: str, source: Source) -> tuple[list[dict[str, object]], Any]:
    """A user's retriever: the source's first sentence (named in configs by this module)."""
    from groundtrace.analyzer.audit._app import whole_source

    evidence, chosen = whole_source(query, source)
    evidence[0]["content"] = source.text.split(". ")[0] + "."
    return evidence, dataclasses.replace(chosen, mode="first-sentence")  # type: ignore[type-var]


def test_the_shipped_corpus_files_are_the_licences_and_questions_in_the_audit_formats() -> None:
    sources, questions = audit_inputs()
    assert SOURCES_FILE.read_text("utf-8") == sources  # else: python -m ...license_audit.corpus
    assert QUESTIONS_FILE.read_text("utf-8") == questions
    config = licence.licence_config("runs/x")
    planned = ANALYSIS.plan(config)
    expected = load_corpus()
    read = planned.inputs.corpus
    assert (read.sources, read.questions, read.gold) == (
        expected.sources, expected.questions, expected.gold,
    )  # fmt: skip
    assert len(planned) == 392
    # the audit's demo hook is the example's config, named by strings (no import of it)
    demo = ANALYSIS.demo
    assert demo is not None
    assert demo(DemoInputs(traces=Path("t"), cases=Path("c"), out=Path("runs/x"))) == config


def test_audit_run_without_sources_is_analyze_on_the_licence_config(tmp_path: Path) -> None:
    for retrieval, option in (("auto", ()), ("flat", ("--retrieval", "flat"))):
        a, b = tmp_path / f"a-{retrieval}", tmp_path / f"b-{retrieval}"
        friendly = _invoke("audit", "run", *option, "--out", str(a))
        config = msgspec.to_builtins(licence.licence_config(b, retrieval=retrieval))  # type: ignore[arg-type]
        analyzed = _analyze(config, b)
        assert (friendly.exit_code, analyzed.exit_code) == (0, 0), friendly.output
        _same(a, b)
        run = msgspec.json.decode((a / "run.json").read_bytes(), type=AuditResult)
        assert run.settings.retrieval == retrieval
        assert run.summary.n_answers == 392 and run.corpus == str(SOURCES_FILE)


def test_a_subset_of_the_shipped_corpus_is_its_files_in_the_run_folder(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    asked = ("--sources", "6", "--questions", "patent-grant,same-licence")
    assert _invoke("audit", "run", *asked, "--out", str(a)).exit_code == 0
    config = licence.licence_config(b, questions=("patent-grant", "same-licence"), max_sources=6)
    done = run_analysis(ANALYSIS, config, out=b)
    assert done.exit_code == 0 and done.result is not None
    assert Path(config.sources) == b / "corpus" / "sources.jsonl"
    assert {q.id for q in done.result.questions} == {"patent-grant", "same-licence"}
    assert len(done.result.sources) == 6
    found, made = _run(a), _run(b)
    assert found.pop("corpus") != made.pop("corpus")  # each run folder holds its subset
    assert found == made
    refused = _invoke("audit", "run", "--sources", "6", "--questions", "nope", "--out", str(a))
    assert refused.exit_code == 2 and "unknown question id(s): nope" in refused.output


def test_nothing_measured_exits_6_in_both(museums: Path, tmp_path: Path) -> None:
    corpus = {
        "sources": str(museums / "museums.jsonl"),
        "questions": str(museums / "questions.jsonl"),
    }
    given = str(museums / "absent.jsonl")
    a, b = tmp_path / "a", tmp_path / "b"
    friendly = _invoke("audit", "run", "--sources", corpus["sources"], "--questions",
                       corpus["questions"], "--answers", given, "--out", str(a))  # fmt: skip
    analyzed = _analyze({"out": str(b), **corpus, "answers": given}, b)
    assert (friendly.exit_code, analyzed.exit_code) == (6, 6), friendly.output + analyzed.output
    assert "no source answered any question" in friendly.output
    assert "no source answered any question" in analyzed.output
    _same(a, b)


def _stance(request: ServerRequest) -> Reply:
    return Reply(content=json.dumps({"stance": "yes", "answer": "Yes.", "quote": ""}))


def test_a_call_ceiling_stops_both_alike(museums: Path, tmp_path: Path) -> None:
    corpus = {
        "sources": str(museums / "museums.jsonl"),
        "questions": str(museums / "questions.jsonl"),
    }
    with OpenAICompatServer(handler=_stance) as server:
        model = {"endpoint": server.base_url, "model": "m"}
        friendly = _invoke("audit", "run", "--sources", corpus["sources"], "--questions",
                           corpus["questions"], "--endpoint", server.base_url, "--model", "m",
                           "--out", str(tmp_path / "a"), "--max-calls", "2",
                           "--concurrency", "1")  # fmt: skip
        assert friendly.exit_code == 5 and "--max-calls 2 reached" in friendly.output
        assert server.request_count == 2
        analyzed = _analyze({"out": str(tmp_path / "b"), **corpus, **model}, tmp_path / "b",
                            "--max-calls", "2", "--concurrency", "1")  # fmt: skip
        assert analyzed.exit_code == 5 and "--max-calls 2 reached" in analyzed.output
        assert server.request_count == 4  # the same ceiling: 2 more calls, none past it


def test_the_audit_runs_from_inside_a_running_event_loop(tmp_path: Path) -> None:
    config = licence.licence_config(tmp_path / "inside")

    async def notebook() -> Any:
        with pytest.raises(ConfigError, match="running event loop"):
            run_analysis(ANALYSIS, config, out=config.out)
        return await run_analysis_async(ANALYSIS, config, out=config.out)

    done = asyncio.run(notebook())
    assert done.exit_code == 0 and done.result is not None
    assert _invoke("audit", "run", "--out", str(tmp_path / "cli")).exit_code == 0
    _same(tmp_path / "cli", tmp_path / "inside")


def test_a_retriever_named_in_the_config_makes_the_evidence(museums: Path, tmp_path: Path) -> None:
    named = f"{__name__}:first_sentence"
    config = Config(out=str(tmp_path / "r"), sources=str(museums / "museums.jsonl"),
                    questions=str(museums / "questions.jsonl"), retriever=named)  # fmt: skip
    done = run_analysis(ANALYSIS, config, out=config.out)
    assert done.result is not None and done.result.settings.retrieval == named
    traces = list(read_traces([str(tmp_path / "r" / "traces")]))
    assert len(traces) == 6
    modes = {s.attributes.get(sc.GT_RETRIEVAL_MODE) for t in traces for s in t.steps}
    assert "first-sentence" in modes
    # the first sentence of salt-works says nothing of strollers: its answer is absent now
    strollers = {a.source_id: a.stance for a in done.result.answers if a.question_id == "strollers"}
    assert strollers["salt-works"] == "absent"
    corpus = ("--sources", config.sources, "--questions", config.questions)
    friendly = _invoke("audit", "run", *corpus, "--retriever", named, "--out", str(tmp_path / "f"))
    assert friendly.exit_code == 0, friendly.output
    _same(tmp_path / "f", tmp_path / "r")


def test_a_retriever_that_cannot_be_imported_is_named(museums: Path, tmp_path: Path) -> None:
    corpus = ("--sources", str(museums / "museums.jsonl"), "--questions",
              str(museums / "questions.jsonl"))  # fmt: skip
    for named, said in (("nowhere.at.all:fn", "cannot import the retriever"),
                        ("no-colon", "not of the form module:qualname")):  # fmt: skip
        friendly = _invoke("audit", "run", *corpus, "--retriever", named, "--out",
                           str(tmp_path / "a"))  # fmt: skip
        assert friendly.exit_code == 2 and said in friendly.output, friendly.output
        assert "--retriever" in friendly.output
        config = {"out": str(tmp_path / "b"), "sources": corpus[1], "questions": corpus[3],
                  "retriever": named}  # fmt: skip
        analyzed = _analyze(config, tmp_path / "b")
        assert (
            analyzed.exit_code == 2 and said in analyzed.output and "retriever" in analyzed.output
        )
    given = _invoke("audit", "run", *corpus, "--answers", str(museums / "absent.jsonl"),
                    "--retriever", f"{__name__}:first_sentence", "--out",
                    str(tmp_path / "c"))  # fmt: skip
    assert given.exit_code == 2 and "need no retriever" in given.output
