"""Command-path validation (SPEC 4.3): did the answer really come from what was read?

Two channels side by side, never merged: the text channel (EM, token F1 vs the reference)
and the path channel (required reads and calls ran successfully with valid arguments,
every citation was read, every quote occurs in what was read, tool results reached the
answer). Each case gets one status (most specific wins, see :data:`STATUS_PRECEDENCE`)
with the evidence behind it; metrics carry seeded bootstrap intervals. A case run without
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
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._bfcl import check_item, concrete_calls
from ._calls import CallMatch, ExecutedCall, check_calls
from ._config import Config
from ._metrics import MetricValue, PathMetrics, compute_metrics
from ._outcome import PathsResult, UnreadableLine
from ._quotes import DEFAULT_QUOTE_THRESHOLD, QuoteMatch, best_quote_match
from ._reading import reading
from ._report import write_report
from ._run import PathReport, validate_traces, validate_traces_async
from ._shape import ANALYSIS, nothing_measured, plan, run, verdicts
from ._tau import AIRLINE_WRITE_TOOLS, tau_bench_cases
from ._tools_config import ToolsConfig, load_tools_config
from ._turns import validate_conversation
from ._types import (
    STATUS_PRECEDENCE,
    CallError,
    CallErrorCode,
    CaseVerdict,
    PathStatus,
)
from ._validate import CITATION_STATUSES, COMMAND_STATUSES, validate_case

__all__ = [
    "AIRLINE_WRITE_TOOLS",
    "ANALYSIS",
    "CITATION_STATUSES",
    "COMMAND_STATUSES",
    "DEFAULT_QUOTE_THRESHOLD",
    "STATUS_PRECEDENCE",
    "CallError",
    "CallErrorCode",
    "CallMatch",
    "CaseVerdict",
    "Config",
    "ExecutedCall",
    "MetricValue",
    "PathMetrics",
    "PathReport",
    "PathStatus",
    "PathsResult",
    "QuoteMatch",
    "ToolsConfig",
    "UnreadableLine",
    "best_quote_match",
    "check_calls",
    "check_item",
    "compute_metrics",
    "concrete_calls",
    "load_tools_config",
    "nothing_measured",
    "plan",
    "reading",
    "run",
    "tau_bench_cases",
    "validate_case",
    "validate_conversation",
    "validate_traces",
    "validate_traces_async",
    "verdicts",
    "write_report",
]

#: Old names, kept working for a release with a DeprecationWarning naming the new one.
__getattr__ = renamed(__name__, {"PathRun": "PathsResult"}, since="0.2.0", remove_in="0.3.0")
