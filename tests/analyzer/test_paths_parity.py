"""``groundtrace paths`` and ``groundtrace analyze paths --config`` are one run.

The friendly command's options make the same ``paths.Config`` a config file gives, and both go
through the one driver: on the same inputs they write identical report files and exit with the
same code -- a run with a failing case (0), nothing measured (6), a run refused under
``--strict`` (2, no report) -- write the same verdicts back (none when nothing was measured)
and take the model-call ceilings the same way. ``paths`` makes
no model call: ``--max-calls`` is accepted by both (and never reached) and refused by both with
the same message when out of range; ``--estimate`` is refused by both with the same message.
The analysis also runs from inside a running event loop (``await run_analysis_async``).

The data is the beekeeping agent of ``tests/analyzer/paths/test_paths_shape.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from groundtrace.analyzer import run_analysis_async
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.paths import ANALYSIS, Config, PathReport
from tests.analyzer.paths.test_paths_shape import HIVES, TOOLS, _traces
from tests.support.otlp_logs_server import OTLPLogsServer

REPORTS = ("report.json", "summary.md", "report.html")
app = build_app()


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """Cases, tools config, the traces, traces of no case, and traces with a broken line."""
    rows = [
        {"id": c, "question": q, "reference_answer": a, "required_reads": [note],
         "required_values": [a]}
        for c, q, note, a in HIVES
    ]  # fmt: skip
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tools.toml").write_text(TOOLS)
    lines = [t.to_json() + "\n" for t in _traces()]
    (tmp_path / "traces.jsonl").write_text("".join(lines))
    (tmp_path / "no_case.jsonl").write_text(lines[2])  # its case id is in no case file
    (tmp_path / "broken.jsonl").write_text("".join(lines) + '{"request": \n')
    return tmp_path


def _friendly(inputs: Path, traces: str, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(app, [
        "paths", str(inputs / traces), "--cases", str(inputs / "cases.jsonl"),
        "--tools-config", str(inputs / "tools.toml"), "--resamples", "300", "--seed", "11",
        "--out", str(out), *extra,
    ])  # fmt: skip


def _config_file(inputs: Path, traces: str, **more: object) -> Path:
    fields: dict[str, object] = {
        "traces": [str(inputs / traces)], "cases": str(inputs / "cases.jsonl"),
        "tools_config": str(inputs / "tools.toml"), "resamples": 300, "seed": 11, **more,
    }  # fmt: skip
    path = inputs / f"{traces}.json"
    path.write_text(json.dumps(fields))
    return path


def _analyze(config: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(
        app, ["analyze", "paths", "--config", str(config), "--out", str(out), *extra]
    )


def _same_reports(a: Path, b: Path) -> None:
    for name in REPORTS:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("traces", "code"),
    [("traces.jsonl", 0), ("no_case.jsonl", 6), ("broken.jsonl", 0)],
    ids=["a-case-fails", "nothing-measured", "an-unreadable-line"],
)
def test_both_commands_write_the_same_reports_and_exit_alike(
    inputs: Path, traces: str, code: int
) -> None:
    friendly = _friendly(inputs, traces, inputs / "p")
    analyzed = _analyze(_config_file(inputs, traces), inputs / "a")
    assert (friendly.exit_code, analyzed.exit_code) == (code, code), friendly.output
    _same_reports(inputs / "p", inputs / "a")
    report = json.loads((inputs / "p" / "report.json").read_text())
    if code == 6:  # both name why, on stderr
        assert report["nothing_measured"].startswith("no trace carries a case id")
        for res in (friendly, analyzed):
            assert "nothing measured: no trace carries a case id" in res.stderr
    else:
        statuses = [(c["id"], c["status"]) for c in report["cases"]]
        assert statuses == [("swarm", "pass"), ("harvest", "both_failed")]
    # the friendly command's own exit on a failing case
    failing = _friendly(inputs, traces, inputs / "f", "--fail-on-failure")
    assert failing.exit_code == (6 if code == 6 else 1)
    _same_reports(inputs / "p", inputs / "f")


@pytest.mark.timeout(300)
def test_both_commands_refuse_an_unreadable_line_under_strict_before_any_report(
    inputs: Path,
) -> None:
    friendly = _friendly(inputs, "broken.jsonl", inputs / "p", "--strict")
    analyzed = _analyze(_config_file(inputs, "broken.jsonl", strict=True), inputs / "a")
    assert (friendly.exit_code, analyzed.exit_code) == (2, 2)
    said = f"1 unreadable trace line(s) (--strict); first: {inputs / 'broken.jsonl'}:4"
    assert said in friendly.stderr and said in analyzed.stderr
    for out in (inputs / "p", inputs / "a"):
        assert not any((out / name).exists() for name in REPORTS)


@pytest.mark.timeout(300)
def test_both_commands_take_the_call_ceilings_alike(inputs: Path) -> None:
    config = _config_file(inputs, "traces.jsonl")
    # a ceiling the run never reaches (paths calls no model): accepted, the same reports
    friendly = _friendly(inputs, "traces.jsonl", inputs / "p", "--max-calls", "1")
    analyzed = _analyze(config, inputs / "a", "--max-calls", "1")
    assert (friendly.exit_code, analyzed.exit_code) == (0, 0), friendly.output
    _same_reports(inputs / "p", inputs / "a")
    # out of range, and an estimate: refused by both, with the same message
    for extra, said in [
        (("--max-calls", "0"), "--max-calls must be >= 1, got 0"),
        (("--estimate",), "paths gives no estimate"),
    ]:
        friendly = _friendly(inputs, "traces.jsonl", inputs / "p2", *extra)
        analyzed = _analyze(config, inputs / "a2", *extra)
        assert (friendly.exit_code, analyzed.exit_code) == (2, 2), extra
        assert said in friendly.stderr and friendly.stderr == analyzed.stderr, extra
        assert not (inputs / "p2" / "report.json").exists()


@pytest.mark.timeout(300)
def test_both_commands_write_back_alike_and_nothing_when_nothing_was_measured(
    inputs: Path,
) -> None:
    sent: dict[tuple[str, str], list[object]] = {}
    for traces in ("traces.jsonl", "no_case.jsonl"):
        for command in ("paths", "analyze"):
            with OTLPLogsServer() as srv:
                back = ("--write-back", "otlp", "--otlp-endpoint", srv.url)
                out = inputs / f"{command}-{traces}"
                res = (
                    _friendly(inputs, traces, out, *back)
                    if command == "paths"
                    else _analyze(_config_file(inputs, traces), out, *back)
                )
            assert res.exit_code == (0 if traces == "traces.jsonl" else 6), res.output
            sent[traces, command] = srv.records
    assert len(sent["traces.jsonl", "paths"]) == 2  # one status per case run
    assert sent["traces.jsonl", "paths"] == sent["traces.jsonl", "analyze"]
    assert sent["no_case.jsonl", "paths"] == sent["no_case.jsonl", "analyze"] == []


@pytest.mark.timeout(300)
async def test_the_analysis_runs_inside_a_running_event_loop(inputs: Path) -> None:
    config = Config(
        traces=(str(inputs / "traces.jsonl"),), cases=str(inputs / "cases.jsonl"),
        tools_config=str(inputs / "tools.toml"), resamples=300, seed=11,
    )  # fmt: skip
    done = await run_analysis_async(ANALYSIS, config, out=inputs / "loop")
    assert done.exit_code == 0 and done.reports == (inputs / "loop" / "report.json",)
    assert done.result is not None
    assert isinstance(done.result.report, PathReport)
    assert done.reading.startswith("Command paths were checked on 2 case(s).")
    # the command (it runs its own loop: in a thread) writes the same reports
    friendly = await asyncio.to_thread(_friendly, inputs, "traces.jsonl", inputs / "p")
    assert friendly.exit_code == 0
    _same_reports(inputs / "p", inputs / "loop")
