"""Trace-model (τ) JSON lines as analysis input: what ``traces convert`` and ``collect phoenix
--out`` write reads back as the same traces, and every analysis gives the same results on it."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.collectors import ReadReport, TraceReadError, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.examples.agent_docs.app import run as run_agent
from tests.analyzer.gate.test_gate_changes import make_runs

app = build_app()
SPANS = Path(__file__).resolve().parents[2] / "fixtures" / "collectors" / "groundtrace.spans.jsonl"


def convert(source: Path, out: Path) -> Path:
    result = CliRunner().invoke(app, ["traces", "convert", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def traces_of(*paths: Path | str) -> list[Any]:
    report = ReadReport()
    traces = list(read_traces([str(p) for p in paths], report=report))
    assert report.ok, report.errors
    return traces


def test_a_converted_file_reads_back_as_the_same_traces(tmp_path: Path) -> None:
    original = traces_of(SPANS)
    model = convert(SPANS, tmp_path / "tau.jsonl")
    assert traces_of(model) == original
    zipped = tmp_path / "tau.jsonl.gz"
    zipped.write_bytes(gzip.compress(model.read_bytes()))
    assert traces_of(zipped) == original
    report = ReadReport()
    assert list(read_traces([str(model)], report=report)) == original
    assert (report.records, report.spans) == (len(original), 0)


def test_a_directory_mixes_model_files_and_otlp_files(tmp_path: Path) -> None:
    (tmp_path / "a-otlp.jsonl").write_bytes(SPANS.read_bytes())
    convert(SPANS, tmp_path / "b-tau.jsonl")
    original = traces_of(SPANS)
    both = traces_of(tmp_path)  # each τ file's traces as it is met, then those built from OTLP
    assert both[len(original) :] == traces_of(tmp_path / "a-otlp.jsonl")
    assert both[: len(original)] == original


def test_model_lines_from_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\n" + convert(SPANS, tmp_path / "tau.jsonl").read_bytes()

    class _Stdin:
        buffer = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]

    monkeypatch.setattr(sys, "stdin", _Stdin())
    assert traces_of("-") == traces_of(SPANS)


def test_bad_model_lines_name_file_line_and_field_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = convert(SPANS, tmp_path / "tau.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["confidence"] = "high"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join([lines[0], json.dumps(first), "{not json", '{"model_version": "9"}', *lines[1:]])
        + "\n",
        encoding="utf-8",
    )
    report = ReadReport()
    traces = list(read_traces([str(bad)], report=report))
    assert len(traces) == len(lines)
    where = [(e.path, e.line, e.field) for e in report.errors]
    assert where == [
        (str(bad), 2, "$.confidence"),
        (str(bad), 3, None),
        (str(bad), 4, "model_version"),
    ]
    assert all(e.reason.startswith("not a trace-model line: ") for e in report.errors)
    with pytest.raises(TraceReadError, match=r"bad\.jsonl:2 \[\$\.confidence\]"):
        list(read_traces([str(bad)]))


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_traces_summary_judge_and_paths_read_model_files(tmp_path: Path) -> None:
    model = convert(SPANS, tmp_path / "tau.jsonl")
    summaries = [
        json.loads(_invoke("traces", "summary", str(p), "--json").stdout) for p in (SPANS, model)
    ]
    for key in ("traces", "steps_by_action", "findings_by_kind", "conventions"):
        assert summaries[0][key] == summaries[1][key]
    judged = []
    for name, path in (("otlp", SPANS), ("tau", model)):
        result = _invoke("judge", "run", str(path), "--out", str(tmp_path / name))
        assert result.exit_code == 0, result.output
        judged.append((tmp_path / name / "judgments.jsonl").read_text(encoding="utf-8"))
    assert judged[0] == judged[1] and judged[0]
    run_agent(tmp_path / "agent")
    agent = convert(tmp_path / "agent" / "traces", tmp_path / "agent-tau.jsonl")
    reports = []
    for path in (tmp_path / "agent" / "traces", agent):
        result = _invoke(
            "paths", str(path), "--cases", str(EXAMPLE_DIR / "cases.jsonl"), "--tools-config",
            str(EXAMPLE_DIR / "tools.toml"), "--out", str(tmp_path / "p"), "--json",
            "--resamples", "200",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.stdout))
    assert reports[0] == reports[1]


def test_gate_reads_model_files(tmp_path: Path) -> None:
    root = make_runs(tmp_path)
    decisions = []
    for tag, base, cand in (
        ("otlp", root / "baseline", root / "candidate"),
        ("tau", convert(root / "baseline", tmp_path / "b.jsonl"),
         convert(root / "candidate", tmp_path / "c.jsonl")),
    ):  # fmt: skip
        result = _invoke(
            "gate", "run", "--baseline", str(base), "--candidate", str(cand), "--cases",
            str(root / "cases.jsonl"), "--out", str(tmp_path / tag), "--json",
        )  # fmt: skip
        assert result.exit_code == 20, result.output
        report = json.loads((tmp_path / tag / "report.json").read_text(encoding="utf-8"))
        decisions.append([(c["case_id"], c["decision"], c["reasons"]) for c in report["cases"]])
    assert decisions[0] == decisions[1] and decisions[0]


def test_interventions_read_model_files(tmp_path: Path) -> None:
    from groundtrace.analyzer.demo import DemoConfig, run_demo
    from tests.support.data import HOTPOT

    demo = tmp_path / "demo"
    run_demo(DemoConfig(model="lexical", questions=2, out=demo, dataset=HOTPOT))
    model = convert(demo / "traces", tmp_path / "demo-tau.jsonl")
    rows = []
    for tag, path in (("otlp", demo / "traces"), ("tau", model)):
        result = _invoke(
            "interventions", str(path), "--cases", str(demo / "cases.jsonl"), "--pool-dataset",
            str(HOTPOT), "--out", str(tmp_path / tag), "--concurrency", "1",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        lines = (tmp_path / tag / "results.jsonl").read_text(encoding="utf-8").splitlines()
        found = {}
        for line in lines:
            row = json.loads(line)
            (row.get("counterfactual") or {}).pop("trace_id", None)  # new for every replay
            found[row["key"]] = row
        rows.append(found)
    assert rows[0] == rows[1] and rows[0]
