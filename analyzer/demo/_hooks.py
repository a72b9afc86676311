"""The analyses the demo runs through their demo hook (``Analysis.demo``): plugins' and others.

After its own phases, the demo hands every analysis that has a ``demo`` hook and no phase of
its own the traces and cases it captured (:class:`~groundtrace.analyzer.DemoInputs`), then
runs it through the one driver (:func:`~groundtrace.analyzer.run_analysis`): its report in
``OUT/<name>/``, then its ``reading``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import msgspec

from groundtrace.analyzer import Analysis, DemoInputs, analyses, get_analysis, run_analysis

__all__ = ["OWN_PHASES", "DemoAnalysis", "run_hooked", "run_through"]

C = TypeVar("C", bound=msgspec.Struct)
R = TypeVar("R")

#: The analyses the demo runs in phases of its own (their hooks, if any, are not used again).
OWN_PHASES = frozenset({"interventions", "gate", "paths", "audit"})


class DemoAnalysis(msgspec.Struct, frozen=True):
    """One analysis run through its demo hook.

    Attributes:
        report: the main report file it wrote.
        reading: its plain-language reading.
        nothing_measured: why it measured nothing, else ``None``.
    """

    report: str
    reading: str
    nothing_measured: str | None = None


def run_through(analysis: Analysis[C, Any, R], config: C, out: Path) -> tuple[R, Path]:
    """``analysis`` on ``config`` through the driver (a local executor); its report in ``out``."""
    done = run_analysis(analysis, config, out=out, concurrency=4)
    assert done.result is not None and done.reports  # not an estimate
    return done.result, done.reports[0]


def run_hooked(traces: Path, cases: Path, out: Path) -> dict[str, DemoAnalysis]:
    """Run every hooked analysis on the demo's ``traces`` and ``cases``; results by name."""
    done: dict[str, DemoAnalysis] = {}
    for name in analyses():
        analysis = get_analysis(name)
        if analysis.demo is None or name in OWN_PHASES:
            continue
        config = analysis.demo(DemoInputs(traces=traces, cases=cases, out=out / name))
        result, report = run_through(analysis, config, out / name)
        done[name] = DemoAnalysis(
            str(report), analysis.reading(result), analysis.nothing_measured(result)
        )
    return done
