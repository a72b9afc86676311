"""Every analysis of the demo, run the one way: its demo hook, then the one driver.

Each analysis with a ``demo`` hook (the built-ins and any plugin's) is handed what the demo
captured (:class:`~groundtrace.analyzer.DemoInputs`, its report folder ``OUT/<name>/``);
the config its hook returns, with the fields the demo's options set (the interventions'
``limit`` and ``operators``...), is run by :func:`~groundtrace.analyzer.run_analysis`, as
``groundtrace analyze NAME --config`` runs that config written to a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer import AnalysisRun, DemoInputs, analyses, get_analysis, run_analysis

__all__ = ["DemoAnalysis", "Settings", "demo_configs", "entry", "run_analyses"]

#: What the demo's options say of an analysis, by name: ``None`` (not run), or the config
#: fields they set over its demo hook's. An analysis not named runs with its hook's config.
Settings = Mapping[str, Mapping[str, Any] | None]
#: Called as work completes with (phase, done, total).
Progress = Callable[[str, int, int | None], None]
#: Times the block of one phase (its name).
Clock = Callable[[str], contextlib.AbstractContextManager[None]]


class DemoAnalysis(msgspec.Struct, frozen=True, kw_only=True):
    """What one analysis's run produced in the demo (an entry of ``DemoReport.analyses``).

    Attributes:
        report: the main report file it wrote.
        reading: its plain-language reading.
        nothing_measured: why it measured nothing, else ``None``.
        exit_code: the exit code its run asks for (``groundtrace analyze NAME`` exits with
            it: the gate's 10, 20, 30; 6 when nothing was measured); 0 in reports of format
            1.5 and earlier, which did not record it.
    """

    report: str
    reading: str
    nothing_measured: str | None = None
    exit_code: int = 0


def entry(done: AnalysisRun[Any]) -> DemoAnalysis:
    """The report entry of one run."""
    return DemoAnalysis(
        report=str(done.reports[0]) if done.reports else "",
        reading=done.reading,
        nothing_measured=done.reason,
        exit_code=done.exit_code,
    )


def demo_configs(inputs: DemoInputs, settings: Settings) -> dict[str, Any]:
    """The config of every analysis the demo runs, by name, in the order of ``analyses()``:
    its demo hook's on ``inputs`` (report folder ``inputs.out / name``), with the fields
    ``settings`` names set.

    Raises:
        ConfigError: a hook cannot make its config from ``inputs``.
    """
    configs: dict[str, Any] = {}
    for name in analyses():
        if name in settings and settings[name] is None:
            continue  # not asked for: not even loaded
        analysis = get_analysis(name)
        if analysis.demo is None:
            continue
        config = analysis.demo(dataclasses.replace(inputs, out=inputs.out / name))
        fields = settings.get(name) or {}
        configs[name] = msgspec.structs.replace(config, **fields) if fields else config
    return configs


def run_analyses(
    configs: Mapping[str, Any], out: Path, *, progress: Progress | None, clock: Clock
) -> dict[str, AnalysisRun[Any]]:
    """Run each config through the driver into ``out / name`` (timed by ``clock``); the runs
    by name.

    One unit at a time: a local model server has one slot (the interventions replay
    through it).

    Raises:
        what :func:`~groundtrace.analyzer.run_analysis` raises.
    """
    runs: dict[str, AnalysisRun[Any]] = {}
    for name, config in configs.items():
        with clock(name):
            runs[name] = run_analysis(
                get_analysis(name), config, out=out / name, concurrency=1,
                progress=progress,
            )  # fmt: skip
    return runs
