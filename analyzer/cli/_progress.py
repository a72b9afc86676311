"""Progress of the long runs (demo, interventions, judge, audit), the same way everywhere.

A :class:`ProgressReporter` is called with ``(phase, done, total)`` as work completes. On a
terminal it draws one rich progress bar per phase (done/total, rate, elapsed, ETA); when the
output is not a terminal (a pipe, a log file, CI) it prints a plain line instead -- phase,
done/total, rate and ETA -- when a phase starts, at most every ``interval`` seconds while it
runs, and when it completes. Lines go to the error console, so ``--json`` output stays clean.

Rate and ETA are measured from a phase's first report (setup before it does not count) and
stay "unknown" until enough progress was seen to extrapolate: ``eta_after_units`` more units,
or ``eta_after_seconds`` seconds with at least one more unit. The bar shows the same ETA as
the lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

__all__ = ["ProgressReporter"]

#: Seconds between two plain progress lines of one phase.
DEFAULT_INTERVAL = 10.0
#: Units done since a phase's first report before a rate and ETA are given...
ETA_AFTER_UNITS = 3
#: ... or seconds since its first report (with at least one unit done in them).
ETA_AFTER_SECONDS = 5.0


class _Field(ProgressColumn):
    """A value the reporter computed (rate, ETA), so bars and lines show the same numbers."""

    def __init__(self, name: str, style: str) -> None:
        super().__init__()
        self._name, self._style = name, style

    def render(self, task: Task) -> Text:
        return Text(str(task.fields.get(self._name, "")), style=self._style)


@dataclass(slots=True)
class _Phase:
    started: float
    first: tuple[float, int] | None = None
    last_line: float | None = None
    task: TaskID | None = None
    finished: bool = False


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class ProgressReporter:
    """Reports ``(phase, done, total)`` as a bar on a terminal, as plain lines otherwise.

    Args:
        console: where progress goes (the error console).
        interval: seconds between two plain lines of one phase.
        clock: monotonic time source (seconds).
        terminal: draw bars (``None``: when ``console`` is a terminal).
        eta_after_units: units done since a phase's first report before a rate and ETA...
        eta_after_seconds: ... or seconds since it (with at least one unit done in them).
    """

    def __init__(
        self,
        console: Console,
        *,
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
        eta_after_units: int = ETA_AFTER_UNITS,
        eta_after_seconds: float = ETA_AFTER_SECONDS,
    ) -> None:
        self._console = console
        self._interval = interval
        self._eta_after = (eta_after_units, eta_after_seconds)
        self._clock = clock
        self._terminal = console.is_terminal if terminal is None else terminal
        self._phases: dict[str, _Phase] = {}
        self._last_event = clock()
        self._bars: Progress | None = None
        if self._terminal:
            self._bars = Progress(
                TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                MofNCompleteColumn(), _Field("rate", "progress.data.speed"),
                TimeElapsedColumn(), _Field("eta", "progress.remaining"),
                console=console, transient=True,
            )  # fmt: skip

    def __enter__(self) -> ProgressReporter:
        self._last_event = self._clock()
        if self._bars is not None:
            self._bars.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bars is not None:
            self._bars.stop()

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        """Record that ``done`` of ``total`` units of ``phase`` are complete."""
        now = self._clock()
        state = self._phases.get(phase)
        if state is None:
            # a phase starts when whatever came before it last reported
            state = self._phases[phase] = _Phase(started=self._last_event)
        self._last_event = now
        if state.first is None:
            state.first = (now, done)
        if self._bars is not None:
            rate, eta = self._estimate(state, done, total, now)
            if state.task is None:
                state.task = self._bars.add_task(phase, total=total)
            self._bars.update(state.task, completed=done, total=total, rate=rate, eta=eta)
            return
        complete = total is not None and done >= total
        due = state.last_line is None or now - state.last_line >= self._interval
        if state.finished or not (due or complete):
            return
        state.last_line, state.finished = now, complete
        self._console.print(self._line(phase, state, done, total, now), markup=False,
                            highlight=False)  # fmt: skip

    def phase(self, name: str) -> Callable[[int, int | None], None]:
        """A ``(done, total)`` callback reporting as ``name``."""
        return lambda done, total: self(name, done, total)

    def _estimate(self, state: _Phase, done: int, total: int | None, now: float) -> tuple[str, str]:
        """``("0.40/s", "ETA 0:00:12")``, or "unknown" while too little progress was seen."""
        first_at, first_done = state.first or (now, done)
        units, seconds = done - first_done, now - first_at
        min_units, min_seconds = self._eta_after
        if seconds <= 0 or units <= 0 or (units < min_units and seconds < min_seconds):
            return "rate unknown", "ETA unknown"
        rate = units / seconds
        if total is None:
            return f"{rate:.2f}/s", "ETA unknown"
        return f"{rate:.2f}/s", f"ETA {_duration(max(total - done, 0) / rate)}"

    def _line(self, phase: str, state: _Phase, done: int, total: int | None, now: float) -> str:
        elapsed = now - state.started
        shown = f"{done}/{total} ({100 * done / total:.0f}%)" if total else f"{done}"
        if total is not None and done >= total:
            overall = f"{done / elapsed:.2f}/s" if elapsed > 0 else "rate unknown"
            return f"{phase}: {shown} done in {_duration(elapsed)}, {overall}"
        speed, eta = self._estimate(state, done, total, now)
        return f"{phase}: {shown}, {speed}, {eta}, elapsed {_duration(elapsed)}"
