"""Progress: rich bars on a terminal, periodic plain lines (phase, done/total, rate, ETA) else."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.cli._progress import ProgressReporter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=120, color_system=None), out


def test_plain_lines_when_not_a_terminal() -> None:
    console, out = _console(terminal=False)
    clock = Clock()
    with ProgressReporter(console, interval=10.0, clock=clock) as progress:
        questions = progress.phase("questions")
        for t, done in ((2.0, 1), (4.0, 2), (12.0, 5), (13.0, 6), (20.0, 10), (21.0, 10)):
            clock.now = 100.0 + t
            questions(done, 10)
        clock.now = 130.0
        progress("pairs", 3, None)
    assert out.getvalue().splitlines() == [
        "questions: 1/10 (10%), 0.50/s, ETA 0:00:18, elapsed 0:00:02",
        # the rate since the first report (t = 2 s): 4 more in 10 s
        "questions: 5/10 (50%), 0.40/s, ETA 0:00:12, elapsed 0:00:12",
        "questions: 10/10 (100%) done in 0:00:20, 0.50/s",
        # a phase starts when the one before it last reported (t = 21 s)
        "pairs: 3, 0.33/s, ETA unknown, elapsed 0:00:09",
    ]


def test_a_bar_on_a_terminal() -> None:
    console, out = _console(terminal=True)
    with ProgressReporter(console) as progress:
        for done in range(1, 5):
            progress("replay units", done, 4)
    shown = out.getvalue()
    assert "replay units" in shown and "4/4" in shown and "ETA" in shown
    assert "done in" not in shown  # no plain lines on a terminal


def test_the_demo_prints_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(),
        ["demo", "--model", "lexical", "--questions", "3", "--interventions", "2",
         "--audit-sources", "0", "--out", str(tmp_path / "demo"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["questions"] == 3
    lines = result.stderr.splitlines()
    assert any(line.startswith("questions: 3/3 (100%) done in") for line in lines), lines
    assert any(line.startswith("interventions: ") and "done in" in line for line in lines), lines
