"""The judge judges an agent: its answers against the results of its tool calls.

The document agent (``groundtrace.examples.agent_docs``) retrieves nothing; it calls tools.
Its answers taken from a stale cache instead of a tool result are the unsupported ones; a
request that called no tool has nothing to ground its answer and is not applicable, named by
its case id with its trace id beside.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.judge import ContextSource, JudgeCase
from groundtrace.analyzer.judge._cases import cases_from_traces
from groundtrace.analyzer.judge._llm_judge import build_prompt
from groundtrace.analyzer.judge._rubric import DEFAULT_RUBRIC
from groundtrace.collectors import read_traces
from groundtrace.examples.agent_docs.app import FAULTS, TASKS, run

app = build_app()
TRACE_ID = re.compile(r"[0-9a-f]{32}")
#: the faults whose answer comes from the stale cache, not from a tool result
FROM_CACHE = {"skip_read", "wrong_file", "read_error", "read_timeout", "ignored_result"}
#: requests that call no tool: a greeting, and an answer from the cache alone
NO_TOOL = {"hello", "grind_settings"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agent")
    run(out)
    return out / "traces"


@pytest.fixture(scope="module")
def judged(traces: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("judge")
    result = CliRunner().invoke(app, ["judge", "run", str(traces), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


def _judgments(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "judgments.jsonl").read_text().splitlines()
    return {row["case_id"]: row for row in map(json.loads, lines)}


def test_every_answer_is_judged_against_its_tool_results(judged: tuple[Path, str]) -> None:
    out, screen = judged
    judgments = _judgments(out)
    assert set(judgments) == {t.case_id for t in TASKS} - NO_TOOL
    assert {row["context"] for row in judgments.values()} == {"tool results"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["contexts"] == {"tool results": len(judgments)}
    assert summary["nothing_measured"] is None and summary["not_judgeable"] == []
    assert f"{len(judgments)} against tool results" in screen


def test_answers_not_taken_from_a_tool_result_fail_adherence(judged: tuple[Path, str]) -> None:
    judgments = _judgments(judged[0])
    adherence = {case: row["scores"]["adherence"] for case, row in judgments.items()}  # type: ignore[index]
    unsupported = {case for case, score in adherence.items() if score < 0.8}
    assert unsupported == {case for case, fault in FAULTS.items() if fault in FROM_CACHE}
    assert all(adherence[case] == 1.0 for case in set(adherence) - unsupported)


def test_a_request_that_called_no_tool_is_not_applicable_by_case(judged: tuple[Path, str]) -> None:
    out, screen = judged
    summary = json.loads((out / "summary.json").read_text())
    entries = {e["case_id"]: e for e in summary["not_applicable"]}
    assert set(entries) == NO_TOOL
    for case, entry in entries.items():
        assert TRACE_ID.fullmatch(entry["trace_id"])
        (missing,) = entry["missing"]
        assert missing.startswith("no retrieved documents or tool results recorded (looked for")
        assert f"not applicable: case {case} (trace {entry['trace_id']})" in screen
    assert "does not apply to 2 trace(s)" in screen


def test_a_run_where_nothing_grounds_any_answer_says_not_applicable(tmp_path: Path) -> None:
    run(tmp_path, tasks=tuple(t for t in TASKS if t.case_id in NO_TOOL))
    out = tmp_path / "judge"
    result = CliRunner().invoke(app, ["judge", "run", str(tmp_path / "traces"), "--out", str(out)])
    assert result.exit_code == 6, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nothing_measured"].startswith(
        "not applicable: no retrieved documents or tool results recorded"
    )
    assert {e["case_id"] for e in summary["not_applicable"]} == NO_TOOL
    assert "case hello (trace " in " ".join(result.output.split())


def test_the_judge_model_is_told_what_the_context_is(traces: Path) -> None:
    cases, _ = cases_from_traces(read_traces([traces]))
    warranty = next(c for c in cases if c.case_id == "warranty")
    assert warranty.source is ContextSource.TOOL_RESULTS
    assert any("24 months" in text for text in warranty.context)  # the read_document result
    assert "CONTEXT (tool results):\n" in build_prompt(DEFAULT_RUBRIC, warranty)
    rag = JudgeCase("c1", "Who?", ("Paris is the capital.",), "Paris")
    assert "\nCONTEXT:\nParis" in build_prompt(DEFAULT_RUBRIC, rag)  # a RAG prompt unchanged
