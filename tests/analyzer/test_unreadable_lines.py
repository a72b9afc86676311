"""Unreadable trace lines are handled identically by every command that reads traces: they
are skipped, counted and named on stderr ("1 unreadable trace line(s) skipped: file:line
reason"), kept as a finding in the command's JSON, and ``--strict`` refuses them (exit 2).
Before, interventions and judge dropped them silently, paths refused and gate only noted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from tests.support.harbour_rag import write_run

app = build_app()


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The harbour app's traces with a corrupted last line, its cases and that line's number."""
    run = write_run(tmp_path_factory.mktemp("harbour"))
    text = (run / "traces").read_text()
    path = run / "broken.jsonl"
    path.write_text(text + '{"resourceSpans": [\n')
    return path, run / "cases.jsonl", text.count("\n") + 1


def _traces_summary(traces: Path, _cases: Path, out: Path) -> list[str]:
    return ["traces", "summary", str(traces), "--json"]


def _gate(traces: Path, cases: Path, out: Path) -> list[str]:
    clean = traces.with_name("traces")  # the candidate: the same traces, unbroken
    return ["gate", "run", "--baseline", str(traces), "--candidate", str(clean), "--cases",
            str(cases), "--out", str(out), "--json"]  # fmt: skip


def _paths(traces: Path, cases: Path, out: Path) -> list[str]:
    return ["paths", str(traces), "--cases", str(cases), "--out", str(out)]


def _judge(traces: Path, _cases: Path, out: Path) -> list[str]:
    return ["judge", "run", str(traces), "--out", str(out)]


def _interventions(traces: Path, cases: Path, out: Path) -> list[str]:
    return ["interventions", str(traces), "--cases", str(cases), "--out", str(out),
            "--operators", "ZERO"]  # fmt: skip


def _finding(out: Path, stdout: str) -> list[str]:
    """Where each command keeps the unreadable lines in its JSON."""
    if (out / "summary.json").exists():
        data = json.loads((out / "summary.json").read_text())
        return list(data.get("read_errors") or data["input"]["read_errors"])
    if (out / "report.json").exists():
        return list(json.loads((out / "report.json").read_text())["notes"])
    return [e["message"] for e in json.loads(stdout)["read_errors"]]


#: command -> (its arguments, its exit code on these traces)
COMMANDS: dict[str, tuple[Callable[[Path, Path, Path], list[str]], int]] = {
    "traces summary": (_traces_summary, 0),
    "gate run": (_gate, 0),
    "paths": (_paths, 6),  # the app calls no tool: nothing to check, said so
    "judge run": (_judge, 0),
    "interventions": (_interventions, 0),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unreadable_line_is_skipped_named_and_kept_then_refused_under_strict(
    broken: tuple[Path, Path, int], tmp_path: Path, command: str
) -> None:
    traces, cases, line = broken
    make, code = COMMANDS[command]
    res = CliRunner().invoke(app, make(traces, cases, tmp_path / "out"))
    assert res.exit_code == code, res.output
    assert f"1 unreadable trace line(s) skipped: {traces}:{line}: invalid JSON" in res.stderr
    assert any("invalid JSON" in f for f in _finding(tmp_path / "out", res.stdout))
    strict = CliRunner().invoke(app, [*make(traces, cases, tmp_path / "strict"), "--strict"])
    assert strict.exit_code == 2, strict.output
    assert f"1 unreadable trace line(s) (--strict); first: {traces}:{line}" in strict.stderr
