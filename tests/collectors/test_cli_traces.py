"""``groundtrace traces summary|convert`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.collectors import Trace
from tests.support.data import DATA
from tests.support.otlp_spans import (
    TRACE_A,
    TRACE_B,
    agent_trace,
    rag_trace,
    request_json,
    write_jsonl,
)

app = build_app()


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def traces_dir(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "a.jsonl", [rag_trace(), agent_trace()])
    return tmp_path


def test_summary_json(runner: CliRunner, traces_dir: Path) -> None:
    result = runner.invoke(app, ["traces", "summary", str(traces_dir), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["traces"] == 2 and data["spans"] == 9
    assert data["steps_by_action"] == {
        "ANSWER": 2,
        "LLM": 1,
        "REQUEST": 2,
        "RETRIEVE": 1,
        "SELECT": 1,
        "TOOL": 2,
    }
    assert data["findings_by_kind"] == {"content_not_captured": 1, "no_retrieval": 1}
    assert data["read_errors"] == []


def test_summary_table(runner: CliRunner, traces_dir: Path) -> None:
    result = runner.invoke(app, ["traces", "summary", str(traces_dir)])
    assert result.exit_code == 0
    assert "2 traces, 9 spans" in result.stdout and "no_retrieval" in result.stdout


def test_read_errors_are_reported_and_strict_fails(runner: CliRunner, traces_dir: Path) -> None:
    with open(traces_dir / "a.jsonl", "a") as handle:
        handle.write("{truncated\n")
    lenient = runner.invoke(app, ["traces", "summary", str(traces_dir), "--json"])
    assert lenient.exit_code == 0
    (error,) = json.loads(lenient.stdout)["read_errors"]
    assert error["line"] == 3 and error["path"].endswith("a.jsonl")
    strict = runner.invoke(app, ["traces", "summary", str(traces_dir), "--strict"])
    assert strict.exit_code == 2
    assert "a.jsonl:3" in strict.stderr


def test_missing_path_is_a_clean_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["traces", "summary", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such file" in result.stderr and "Traceback" not in result.output


def test_convert_writes_tau_jsonl(runner: CliRunner, traces_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "tau.jsonl"
    result = runner.invoke(
        app, ["traces", "convert", str(traces_dir / "a.jsonl"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    traces = [Trace.from_json(line) for line in out.read_text().splitlines()]
    assert [t.trace_id for t in traces] == [TRACE_A, TRACE_B]
    assert traces[0].answer == "Steven Spielberg"


def test_convert_transcripts(runner: CliRunner, tmp_path: Path) -> None:
    src = DATA / "agent_tools/tau_bench_traces/gpt-4o-airline_dev_40.jsonl"
    out = tmp_path / "tau.jsonl"
    result = runner.invoke(
        app, ["traces", "convert", str(src), "--out", str(out), "--format", "transcript"]
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 40
    assert sum(len(Trace.from_json(x).tool_calls) for x in lines) == 274


@pytest.mark.parametrize("command", ["summary", "convert"])
@pytest.mark.parametrize("content", ["{not json\n[1, 2]\n", ""])
def test_nothing_readable_is_a_non_zero_exit(
    runner: CliRunner, tmp_path: Path, command: str, content: str
) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(content)
    extra = ["--out", str(tmp_path / "tau.jsonl")] if command == "convert" else []
    result = runner.invoke(app, ["traces", command, str(src), *extra])
    assert result.exit_code == 2, result.output
    errors = content.count("\n")
    assert f"no trace could be read from the input ({errors} read error(s))" in result.stderr


def test_a_bad_field_keeps_the_trace_and_exits_zero(runner: CliRunner, tmp_path: Path) -> None:
    obj = request_json(rag_trace())
    obj["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["kind"] = "SPAN_KIND_SIDEWAYS"
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(obj) + "\n")
    out = tmp_path / "tau.jsonl"
    result = runner.invoke(app, ["traces", "convert", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (trace,) = [Trace.from_json(line) for line in out.read_text().splitlines()]
    assert len(trace.llm_calls) == 1
    (finding,) = trace.findings_of("malformed_field")
    assert finding.field == "resourceSpans[0].scopeSpans[0].spans[3].kind"
    assert "t.jsonl:1" in result.stderr
