"""`groundtrace demo` end to end with the lexical reader (no model server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer._results import decode
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.demo import DemoConfig, DemoReport, run_demo
from groundtrace.analyzer.demo._run import ExportCounts, _report
from groundtrace.analyzer.demo._summary import TraceSummary
from groundtrace.collectors.readers import ReadReport, read_traces
from tests.support.data import HOTPOT

app = build_app()


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("demo") / "run"
    return run_demo(DemoConfig(model="lexical", questions=4, out=out))


def test_traces_exist_and_are_otlp_json_lines(demo_run) -> None:
    files = sorted(demo_run.traces_dir.glob("*.jsonl"))
    assert files, "no trace file written"
    lines = [line for f in files for line in f.read_text().splitlines() if line.strip()]
    assert lines
    for line in lines:
        assert "resourceSpans" in json.loads(line)


def test_summary_counts_match_traces(demo_run) -> None:
    report = ReadReport()
    traces = list(read_traces([demo_run.traces_dir], report=report))
    assert report.ok
    summary = demo_run.summary
    assert summary.traces == len(traces) == 4
    assert summary.spans == sum(len(t.steps) for t in traces)
    for action in ("REQUEST", "RETRIEVE", "ANSWER", "SELECT", "LLM"):
        assert summary.spans_by_action[action] == 4, action
    assert summary.answered == 4
    assert summary.missing_cases == [] and summary.unmatched_traces == 0
    assert demo_run.report.export_stats.dropped == 0


def test_report_is_the_run_summed_up(demo_run) -> None:
    report, summary = demo_run.report, demo_run.summary
    assert report.questions == 4 and report.traces == summary.traces == 4
    assert report.spans_by_action == dict(sorted(summary.spans_by_action.items()))
    assert report.accuracy == summary.correct / 4 and report.mean_f1 == summary.f1_sum / 4
    assert report.traces_dir == str(demo_run.traces_dir) and report.cases == str(
        demo_run.cases_path
    )
    assert report.analyses == {}  # DemoConfig's defaults run no analysis


def test_the_audit_runs_only_when_asked(demo_run) -> None:
    assert "audit" not in demo_run.report.analyses  # DemoConfig's default: audit_sources=0
    assert not (demo_run.config.out / "audit").exists()


def test_rates_are_none_when_nothing_was_measured(demo_run) -> None:
    empty = _report(
        demo_run.config, demo_run.backend, traces_dir=demo_run.traces_dir,
        cases_path=demo_run.cases_path, version="v", questions=1, seconds=0.1,
        stats=ExportCounts(0, 0, 0, 0), summary=TraceSummary(),
    )  # fmt: skip
    assert empty.answered == 0
    assert (empty.accuracy, empty.em_rate, empty.mean_f1, empty.mean_confidence) == (None,) * 4


def test_cases_file_joins_traces_by_case_id(demo_run) -> None:
    rows = [json.loads(line) for line in demo_run.cases_path.read_text().splitlines()]
    assert len(rows) == 4
    assert set(rows[0]) == {
        "case_id",
        "question",
        "reference_answer",
        "gold_support_titles",
        "type",
        "level",
    }
    traces = list(read_traces([demo_run.traces_dir]))
    by_case = {t.request.case_id: t for t in traces}
    assert set(by_case) == {r["case_id"] for r in rows}
    for row in rows:
        trace = by_case[row["case_id"]]
        assert trace.request.query == row["question"]
        assert trace.request.app_name == "hotpot-rag"
        assert trace.request.app_version == "1.0.0+bm25-top5"
        assert 0 < len(trace.evidence) <= 5
        assert all(e.id.startswith(row["case_id"] + ":") for e in trace.evidence)
        assert trace.answer is not None and trace.confidence is not None
        assert trace.entrypoint is not None
        assert trace.selected_ids and set(trace.selected_ids) <= {e.id for e in trace.evidence}


def test_cli_json_top_k_and_dataset(tmp_path: Path) -> None:
    dataset = tmp_path / "three.json"
    items = [json.loads(line) for line in HOTPOT.read_text().splitlines()[150:153]]
    dataset.write_text(json.dumps(items))
    result = CliRunner().invoke(
        app,
        [
            "demo",
            "--model",
            "lexical",
            "--dataset",
            str(dataset),
            "--questions",
            "5",
            "--top-k",
            "2",
            "--attribution",
            "3",
            "--out",
            str(tmp_path / "out"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["questions"] == 3 and summary["traces"] == 3
    assert summary["app_version"] == "1.0.0+bm25-top2"
    assert set(summary) == {
        "format_version", "model", "backend", "app_version", "top_k", "out", "traces_dir",
        "cases", "questions", "seconds", "seconds_per_question", "export_stats", "traces",
        "spans", "spans_by_action", "findings_by_kind", "read_errors", "answered",
        "unmatched_traces", "missing_cases", "failed_calls", "failed", "correct",
        "exact_match", "accuracy", "em_rate",
        "mean_f1", "mean_confidence", "candidate_version", "phase_seconds", "analyses",
    }  # fmt: skip
    assert summary["format_version"] == "1.6"
    # every analysis, the judge included, in the order of analyses()
    assert list(summary["analyses"]) == [
        "attribution", "audit", "gate", "interventions", "judge", "paths",
    ]  # fmt: skip
    assert list(summary["phase_seconds"]) == [
        "model server", "app", "candidate app", "agent app", "attribution", "audit", "gate",
        "interventions", "judge", "paths",
    ]  # fmt: skip
    assert summary["candidate_version"] == "1.0.0+bm25-top2"
    gate = summary["analyses"]["gate"]
    assert gate["exit_code"] in {0, 10, 20, 30} and gate["reading"].startswith("The gate ")
    assert gate["report"] == str(tmp_path / "out" / "gate" / "report.json")
    replayed = json.loads((tmp_path / "out" / "interventions" / "summary.json").read_text())
    assert replayed["items"] == 3
    # the attribution of the 3 answers --attribution asks for, each replayed top-k + 1 times; its
    # exit code is recorded, not exited with
    attributed = summary["analyses"]["attribution"]
    assert attributed["exit_code"] == 0 and attributed["nothing_measured"] is None
    rows = json.loads((tmp_path / "out" / "attribution" / "attribution.json").read_text())["rows"]
    assert [(len(r["sources"]), r["passes"]) for r in rows] == [(2, 3)] * 3
    changed = sum(any(s["score"] >= 1.0 for s in r["sources"]) for r in rows)
    assert f"{changed} of 3 answer(s) change when one source is removed" in attributed["reading"]
    # the default demo also runs the offline licence audit
    audited = summary["analyses"]["audit"]
    assert audited["exit_code"] == 0 and audited["nothing_measured"] is None
    assert (tmp_path / "out" / "audit" / "report.html").is_file()
    assert summary["backend"]["kind"] == "lexical" and summary["export_stats"]["dropped"] == 0
    assert decode(result.stdout, DemoReport).answered == 3
    traces = list(read_traces([tmp_path / "out" / "traces"]))
    assert {t.request.case_id for t in traces} == {i["_id"] for i in items}
    assert all(len(t.evidence) <= 2 for t in traces)


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    bad_model = runner.invoke(app, ["demo", "--model", "gpt-9", "--out", str(tmp_path / "a")])
    assert bad_model.exit_code == 2
    assert "unknown model" in bad_model.output
    missing = runner.invoke(
        app,
        [
            "demo",
            "--model",
            "lexical",
            "--dataset",
            str(tmp_path / "nope.jsonl"),
            "--out",
            str(tmp_path / "b"),
        ],
    )
    assert missing.exit_code == 2
    assert "nope.jsonl" in missing.output
    down = runner.invoke(
        app, ["demo", "--model", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "c")]
    )
    assert down.exit_code == 3
    assert "--model lexical" in down.output


def test_demo_against_url_of_http_lexical_server(tmp_path: Path) -> None:
    from groundtrace.analyzer.backends import LEXICAL_MODEL, LexicalServer

    with LexicalServer() as server:
        url = server.base_url
        result = run_demo(DemoConfig(model=url, questions=2, out=tmp_path / "u"))
    assert result.backend.kind == "url" and result.backend.model == LEXICAL_MODEL
    assert result.summary.traces == 2 and result.summary.answered == 2
    (call,) = next(iter(read_traces([result.traces_dir]))).llm_calls
    assert call.base_url is not None and call.base_url.startswith(url)


def test_failing_model_server_is_a_clear_error(tmp_path: Path) -> None:
    from tests.support.openai_server import OpenAICompatServer, Reply

    with OpenAICompatServer(handler=lambda req: Reply(status=500)) as srv:
        result = CliRunner().invoke(
            app, ["demo", "--model", srv.base_url, "--questions", "1", "--out", str(tmp_path)]
        )
    assert result.exit_code == 3, result.output
    assert "model call for case" in result.output
