"""Validate a set of traces against a case file: join by case id, validate, summarise."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.model import Trace

from ._metrics import PathMetrics, compute_metrics
from ._quotes import DEFAULT_QUOTE_THRESHOLD
from ._tools_config import ToolsConfig
from ._types import CaseVerdict
from ._validate import validate_case

__all__ = ["PathReport", "validate_traces"]


class PathReport(Result, frozen=True, kw_only=True):
    """Verdicts of every case with a trace, the metrics, and what could not be joined.

    The record of ``report.json`` (``verdicts`` is ``cases`` in JSON).

    Attributes:
        verdicts: one per (case, trace) pair, in case-file order.
        metrics: the :class:`PathMetrics`.
        missing_traces: case ids with no trace (not scored).
        unmatched_traces: trace ids whose case id is absent from the case file.
        quote_threshold: the fuzzy quote threshold used.
        tools_config: where the tools config came from, if any.
        notes: anything else the reader should know (read errors...).
    """

    verdicts: tuple[CaseVerdict, ...] = msgspec.field(name="cases")
    metrics: PathMetrics
    missing_traces: tuple[str, ...] = ()
    unmatched_traces: tuple[str, ...] = ()
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD
    tools_config: str | None = None
    notes: tuple[str, ...] = ()


def validate_traces(
    traces: Iterable[Trace],
    cases: Sequence[Case],
    tools: ToolsConfig | None = None,
    *,
    settings: StatsSettings | None = None,
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD,
    notes: Sequence[str] = (),
) -> PathReport:
    """Join traces to cases by ``request.case_id`` and validate every pair.

    Several traces of one case (repeated runs) each get a verdict. ``traces`` is read once,
    lazily: each trace is validated as it arrives and then let go, so memory holds the
    cases, the verdicts and the ids of unmatched traces, never the traces. Verdicts come in
    case-file order, the runs of one case in arrival order.
    """
    entries: dict[str, list[tuple[int, Case]]] = {}
    for position, case in enumerate(cases):
        entries.setdefault(case.case_id, []).append((position, case))
    found: list[tuple[int, int, CaseVerdict]] = []
    unmatched: list[str] = []
    for arrival, trace in enumerate(traces):
        case_id = trace.request.case_id
        matching = entries.get(case_id) if case_id is not None else None
        if not matching:
            unmatched.append(trace.trace_id)
            continue
        found.extend(
            (position, arrival, validate_case(case, trace, tools, quote_threshold=quote_threshold))
            for position, case in matching
        )
    found.sort(key=lambda item: (item[0], item[1]))
    verdicts = [verdict for _, _, verdict in found]
    scored = {position for position, _, _ in found}
    missing = [case.case_id for position, case in enumerate(cases) if position not in scored]
    return PathReport(
        verdicts=tuple(verdicts),
        metrics=compute_metrics(verdicts, settings),
        missing_traces=tuple(missing),
        unmatched_traces=tuple(unmatched),
        quote_threshold=quote_threshold,
        tools_config=None if tools is None else tools.source,
        notes=tuple(notes),
    )
