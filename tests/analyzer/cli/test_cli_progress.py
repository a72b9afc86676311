"""Progress: rich bars on a terminal, periodic plain lines (phase, done/total, rate, ETA) else."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

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
        # one report is no rate: nothing to extrapolate from yet
        "questions: 1/10 (10%), rate unknown, ETA unknown, elapsed 0:00:02",
        # the rate since the first report (t = 2 s): 4 more in 10 s
        "questions: 5/10 (50%), 0.40/s, ETA 0:00:12, elapsed 0:00:12",
        "questions: 10/10 (100%) done in 0:00:20, 0.50/s",
        # a phase starts when the one before it last reported (t = 21 s)
        "pairs: 3, rate unknown, ETA unknown, elapsed 0:00:09",
    ]


def _lines_of(reports: list[tuple[float, int]], total: int, **kwargs: Any) -> list[str]:
    console, out = _console(terminal=False)
    clock = Clock()
    with ProgressReporter(console, interval=0.0, clock=clock, **kwargs) as progress:
        for t, done in reports:
            clock.now = 100.0 + t
            progress("replays", done, total)
    return out.getvalue().splitlines()


def test_no_eta_from_a_first_unit_slowed_by_setup() -> None:
    # 80 replays take 6 s: the first needs 5.9 s (warm-up), the other 79 a tenth of a second
    reports = [(5.9, 1), (5.91, 2), (5.93, 4), (5.95, 20), (6.0, 80)]
    assert _lines_of(reports, 80) == [
        # the first line used to extrapolate 1 unit in 5.9 s to "ETA 0:07:46"
        "replays: 1/80 (1%), rate unknown, ETA unknown, elapsed 0:00:06",
        "replays: 2/80 (2%), rate unknown, ETA unknown, elapsed 0:00:06",
        # 3 units since the first report (in 0.03 s): now a rate over that time
        "replays: 4/80 (5%), 100.00/s, ETA 0:00:01, elapsed 0:00:06",
        "replays: 20/80 (25%), 380.00/s, ETA 0:00:00, elapsed 0:00:06",
        "replays: 80/80 (100%) done in 0:00:06, 13.33/s",
    ]


def test_slow_units_get_an_eta_after_a_few_seconds() -> None:
    # a phase announced at 0, one model call a minute: one unit suffices after 5 s
    reports = [(0.0, 0), (1.0, 0), (60.0, 1), (120.0, 2)]
    assert _lines_of(reports, 10) == [
        "replays: 0/10 (0%), rate unknown, ETA unknown, elapsed 0:00:00",
        "replays: 0/10 (0%), rate unknown, ETA unknown, elapsed 0:00:01",
        "replays: 1/10 (10%), 0.02/s, ETA 0:09:00, elapsed 0:01:00",
        "replays: 2/10 (20%), 0.02/s, ETA 0:08:00, elapsed 0:02:00",
    ]
    # the thresholds are settings
    assert _lines_of([(0.0, 0), (1.0, 1)], 10, eta_after_units=1)[1] == (
        "replays: 1/10 (10%), 1.00/s, ETA 0:00:09, elapsed 0:00:01"
    )


def test_the_bar_shows_the_same_eta_as_the_lines() -> None:
    console, _ = _console(terminal=True)
    clock = Clock()
    with ProgressReporter(console, clock=clock) as progress:
        bars = progress._bars
        assert bars is not None
        seen = []
        for t, done in ((5.9, 1), (5.93, 4)):
            clock.now = 100.0 + t
            progress("replays", done, 80)
            (task,) = bars.tasks
            seen.append((task.fields["rate"], task.fields["eta"]))
    assert seen == [("rate unknown", "ETA unknown"), ("100.00/s", "ETA 0:00:01")]


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
    assert any(line.startswith("replay units: ") and "done in" in line for line in lines), lines
    assert any(line.startswith("judging: ") and "done in" in line for line in lines), lines
