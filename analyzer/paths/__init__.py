"""Command-path validation (SPEC 4.3): did the answer really come from what was read?

Two channels side by side, never merged: the text channel (EM, token F1 vs the reference)
and the path channel (required reads and calls ran successfully with valid arguments,
every citation was read, every quote occurs in what was read, tool results reached the
answer). Each case gets one status (:class:`PathStatus`, the most specific wins) with
the evidence behind it; metrics carry seeded bootstrap intervals. A case run without
tool calls whose case declares no path (:attr:`Case.declares_path`: no read, call or value
required, not even an empty list of them) is ``not_applicable`` ("no tool calls": a RAG app
retrieving without tools has no command path), never a failure. Multi-turn cases
(BFCL multi-turn, :attr:`Case.turns`) are checked turn by turn on a conversation: the traces
of a case sharing a conversation id, or one trace of every turn (see :mod:`._turns`).

Usage (what ``groundtrace paths`` and ``groundtrace analyze paths --config FILE.toml`` run:
the units are the cases, the traces are streamed by ``run``)::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.paths import ANALYSIS, Config

    config = Config(traces=("runs/agent/traces",), cases="cases.jsonl", tools_config="tools.toml")
    done = run_analysis(ANALYSIS, config, out="out/paths")  # report.json, summary.md, .html
    print(done.reading, done.exit_code, done.result.read_errors)

In a notebook or an async service, ``await run_analysis_async(ANALYSIS, config, out=...)``;
traces already read (or made) in code are validated by awaiting
:func:`validate_traces_async`, in the caller's event loop::

    from groundtrace.analyzer.cases import read_cases
    from groundtrace.analyzer.paths import load_tools_config, validate_traces_async
    from groundtrace.collectors import read_traces

    report = await validate_traces_async(
        read_traces(["runs/agent/traces"]),
        list(read_cases("cases.jsonl")),
        load_tools_config("tools.toml"),
    )
    print(report.metrics.path_pass_rate.value, report.metrics.masked_failures)

The checks behind a verdict (the BFCL-style call checker, quotes, tau-bench cases, turns) live
in the private modules of this package; :func:`validate_traces` (sync) is deprecated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use, renamed

from ._config import Config

if TYPE_CHECKING:
    from ._metrics import PathMetrics
    from ._outcome import PathsResult
    from ._reading import reading
    from ._report import write_report
    from ._run import PathReport, validate_traces_async
    from ._run import validate_traces as validate_traces  # deprecated (0.2.0 -> 0.3.0)
    from ._shape import ANALYSIS, nothing_measured, plan, run, verdicts
    from ._tools_config import ToolsConfig, load_tools_config
    from ._types import CaseVerdict, PathStatus

__all__ = [
    "ANALYSIS",
    "CaseVerdict",
    "Config",
    "PathMetrics",
    "PathReport",
    "PathStatus",
    "PathsResult",
    "ToolsConfig",
    "load_tools_config",
    "nothing_measured",
    "plan",
    "reading",
    "run",
    "validate_traces_async",
    "verdicts",
    "write_report",
]

#: Where each name no longer exported lives now (the checks behind a verdict are internals).
_MOVED = {
    "AIRLINE_WRITE_TOOLS": "_tau",
    "CITATION_STATUSES": "_validate",
    "COMMAND_STATUSES": "_validate",
    "DEFAULT_QUOTE_THRESHOLD": "_quotes",
    "STATUS_PRECEDENCE": "_types",
    "CallError": "_types",
    "CallErrorCode": "_types",
    "CallMatch": "_calls",
    "ExecutedCall": "_calls",
    "MetricValue": "_metrics",
    "QuoteMatch": "_quotes",
    "UnreadableLine": "_outcome",
    "best_quote_match": "_quotes",
    "check_calls": "_calls",
    "check_item": "_bfcl",
    "compute_metrics": "_metrics",
    "concrete_calls": "_bfcl",
    "tau_bench_cases": "_tau",
    "validate_case": "_validate",
    "validate_conversation": "_turns",
}

#: Old names, kept working for a release with a DeprecationWarning naming where they are now.
_OLD = {"PathRun": "PathsResult"} | {n: f"{__name__}.{home}.{n}" for n, home in _MOVED.items()}
#: Every name but the config record is imported on first use: ``groundtrace paths --help``
#: builds its options from :class:`Config` without loading numpy or the trace readers.
_SURFACE = {
    "._metrics": ("PathMetrics",),
    "._outcome": ("PathsResult",),
    "._reading": ("reading",),
    "._report": ("write_report",),
    "._run": ("PathReport", "validate_traces", "validate_traces_async"),
    "._shape": ("ANALYSIS", "nothing_measured", "plan", "run", "verdicts"),
    "._tools_config": ("ToolsConfig", "load_tools_config"),
    "._types": ("CaseVerdict", "PathStatus"),
}
__getattr__ = renamed(
    __name__, _OLD, since="0.2.0", remove_in="0.3.0", fallback=imported_on_use(__name__, _SURFACE)
)
