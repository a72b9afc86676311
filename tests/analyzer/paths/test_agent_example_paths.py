"""The document agent's traces: the analyzer finds every injected fault, and only those."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.paths import (
    PathReport,
    load_tools_config,
)
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR, FAULTS, LUCKY_FAULTS, run
from tests.analyzer.paths.checking import validate

CASES = EXAMPLE_DIR / "cases.jsonl"
TOOLS = EXAMPLE_DIR / "tools.toml"
EXPECTED_STATUS = {
    "stale_cache": "zero_call_citation",
    "skip_read": "missing_command",
    "wrong_file": "both_failed",
    "search_citation": "invalid_quote",
    "fabricated": "fabricated_quote",
    "read_error": "tool_error",
    "read_timeout": "timeout",
    "wrong_currency": "param_error",
    "ignored_result": "unused_result",
}

app = build_app()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agent")
    run(out)
    return out


@pytest.fixture(scope="module")
def report(run_dir: Path) -> PathReport:
    read = ReadReport()
    traces = list(read_traces([run_dir / "traces"], report=read))
    assert read.errors == []
    return validate(traces, list(read_cases(CASES)), load_tools_config(TOOLS))


def test_masked_failures_are_exactly_the_lucky_faults(report: PathReport) -> None:
    lucky = {case for case, fault in FAULTS.items() if fault in LUCKY_FAULTS}
    assert len(lucky) == 8
    assert set(report.metrics.masked_failures) == lucky
    failed = {v.case_id for v in report.verdicts if v.path_pass is False}
    assert failed == set(FAULTS)


def test_each_fault_gets_its_status(report: PathReport) -> None:
    by_id = {v.case_id: v for v in report.verdicts}
    assert {c: by_id[c].status.value for c in FAULTS} == {
        c: EXPECTED_STATUS[f] for c, f in FAULTS.items()
    }
    assert by_id["hello"].status.value == "not_required"
    assert by_id["hours"].status.value == "pass" and by_id["hours"].text_correct is False
    honest = [v for v in report.verdicts if v.case_id not in FAULTS and v.case_id != "hello"]
    assert all(v.status.value == "pass" for v in honest)
    lid = by_id["lid_price"].issues[0]
    assert lid["citation"] == "docs/products/kettle-k2.md"
    assert lid["seen_in"] == ["the result of search (call 0)"]


def test_metrics(report: PathReport) -> None:
    m = report.metrics
    assert m.path_pass_rate.numerator == 6 and m.path_pass_rate.denominator == 15
    q = {k: int(v.numerator) for k, v in m.quadrants.items()}
    assert q == {
        "text_correct|path_pass": 5,
        "text_correct|path_fail": 8,
        "text_incorrect|path_pass": 1,
        "text_incorrect|path_fail": 1,
    }
    assert m.conditional_text_score.value == pytest.approx(5 / 6)
    assert m.citation_precision.value is not None and m.citation_precision.value < 1.0
    low, high = m.path_pass_rate.ci_low, m.path_pass_rate.ci_high
    assert low is not None and high is not None and low < 0.4 < high
    assert to_builtins(m)["bootstrap"]["seed"] == 42


def test_cli_json_and_reports(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "paths"
    result = CliRunner().invoke(
        app,
        ["paths", str(run_dir / "traces"), "--cases", str(CASES), "--tools-config", str(TOOLS),
         "--out", str(out), "--json", "--resamples", "500", "--seed", "7"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {"cases", "metrics"}
    statuses = {c["id"]: c["status"] for c in payload["cases"]}
    assert statuses["scale_max"] == "fabricated_quote"
    assert payload["metrics"]["path_pass_rate"]["value"] == pytest.approx(0.4)
    assert len(payload["metrics"]["path_pass_rate"]["ci"]) == 2
    assert payload["metrics"]["quadrants"]["text_correct|path_fail"]["numerator"] == 8
    assert payload["metrics"]["bootstrap"]["seed"] == 7
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "Masked failures" in summary and "**express** `both_failed`" in summary
    page = (out / "report.html").read_text(encoding="utf-8")
    assert (
        "<svg" in page
        and "<script" not in page
        and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )
    failing = CliRunner().invoke(
        app,
        ["paths", str(run_dir / "traces"), "--cases", str(CASES), "--out", str(out),
         "--fail-on-failure"],
    )  # fmt: skip
    assert failing.exit_code == 1


def test_a_stream_of_traces_is_validated_like_a_list(run_dir: Path, report: PathReport) -> None:
    cases = list(read_cases(CASES))
    tools = load_tools_config(TOOLS)
    traces = list(read_traces([run_dir / "traces"]))
    # reversed and streamed (read once, none held): verdicts still come in case-file order
    assert validate(iter(traces[::-1]), cases, tools) == report
    # two runs of one case: both validated, in arrival order
    twice = validate(iter([traces[1], *traces]), cases, tools)
    runs = [v.trace_id for v in twice.verdicts if v.case_id == traces[1].request.case_id]
    assert len(twice.verdicts) == len(report.verdicts) + 1
    assert runs == [traces[1].trace_id, traces[1].trace_id]


def test_cli_a_trace_read_error_is_bad_input_under_strict(run_dir: Path, tmp_path: Path) -> None:
    (source,) = sorted((run_dir / "traces").iterdir())
    broken = tmp_path / "traces.jsonl"
    broken.write_bytes(source.read_bytes() + b"{not json\n")
    result = CliRunner().invoke(
        app,
        ["paths", str(broken), "--cases", str(CASES), "--out", str(tmp_path / "out"), "--strict"],
    )
    assert result.exit_code == 2
    assert "1 unreadable trace line(s) (--strict)" in result.output
    bad_line = len(source.read_bytes().splitlines()) + 1  # after the source's lines
    assert f"{broken}:{bad_line}" in result.output
    assert not (tmp_path / "out" / "report.json").exists()
