"""Validate a set of traces against a case file: join by case id, validate, summarise."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from groundtrace.analyzer._deprecation import deprecated
from groundtrace.analyzer._foreign import case_by_question, question_index
from groundtrace.analyzer._results import Result
from groundtrace.analyzer._wording import some
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import Executor, LocalExecutor
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.model import Trace

from ._applies import NO_TOOL_CALLS
from ._metrics import PathMetrics, compute_metrics
from ._quotes import DEFAULT_QUOTE_THRESHOLD
from ._tools_config import ToolsConfig
from ._turns import conversation_order, validate_conversation
from ._types import CaseVerdict, PathStatus

__all__ = ["UNMATCHED_SAMPLE", "PathReport", "validate_traces", "validate_traces_async"]

#: How many ids of unmatched traces a report lists (it counts them all): a production input
#: is mostly traffic without a case, and its ids must not grow the report with the input.
UNMATCHED_SAMPLE = 100


class PathReport(Result, frozen=True, kw_only=True):
    """Verdicts of every case with a trace, the metrics, and what could not be joined.

    The record of ``report.json`` (``verdicts`` is ``cases`` in JSON).

    Attributes:
        verdicts: one per (case, trace) pair, in case-file order.
        metrics: the :class:`PathMetrics`.
        missing_traces: case ids with no trace (not scored).
        incomplete_traces: case id -> why its trace is incomplete (spans lost to unreadable
            input, a missing parent or root: ``Trace.incomplete``); not evaluable, never
            scored on what remains.
        unmatched_traces: the ids of the first :data:`UNMATCHED_SAMPLE` traces whose case id
            is absent from the case file.
        unmatched_count: how many traces those are in all (None in a report written before
            it was counted: there ``unmatched_traces`` lists every one).
        quote_threshold: the fuzzy quote threshold used.
        tools_config: where the tools config came from, if any.
        notes: anything else the reader should know (read errors...).
        not_applicable: how many case runs the path channel does not apply to (no tool
            call ran, nothing required: status ``not_applicable``, never scored).
        nothing_measured: why no case run was checked, when none was (no trace of any
            case, every run ``not_applicable`` or ``not_required``); ``None`` otherwise.
            ``groundtrace paths`` then exits with ``NothingMeasuredError`` (6).
    """

    verdicts: tuple[CaseVerdict, ...] = msgspec.field(name="cases")
    metrics: PathMetrics
    missing_traces: tuple[str, ...] = ()
    incomplete_traces: dict[str, str] = msgspec.field(default_factory=dict)
    unmatched_traces: tuple[str, ...] = ()
    unmatched_count: int | None = None
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD
    tools_config: str | None = None
    notes: tuple[str, ...] = ()
    not_applicable: int = 0
    nothing_measured: str | None = None


def _nothing_measured(
    verdicts: Sequence[CaseVerdict], n_cases: int, n_traces: int, incomplete: Mapping[str, str]
) -> str | None:
    """Why no verdict was checked (see :attr:`PathReport.nothing_measured`), or ``None``."""
    if not verdicts and incomplete:
        return (
            f"every trace joined to a case is incomplete ({len(incomplete)} case(s): "
            f"{some(list(incomplete), 5)}): spans lost to unreadable input are never a verdict"
        )
    if not verdicts:
        return (
            f"no trace carries a case id of the case file ({n_traces} trace(s) read, "
            f"{n_cases} case(s)): the traces are joined to the cases by request.case_id"
        )
    if any(v.path_pass is not None for v in verdicts):
        return None
    inapplicable = sum(v.status is PathStatus.NOT_APPLICABLE for v in verdicts)
    if inapplicable == len(verdicts):
        return (
            f"not applicable: {NO_TOOL_CALLS} -- none of the {len(verdicts)} case run(s) ran "
            "a tool call, and no case requires a read, a call or a value; a command-path "
            "check needs an app whose tools are traced (TOOL spans)"
        )
    return (
        f"no case run was checked: {inapplicable} not applicable ({NO_TOOL_CALLS}), "
        f"{len(verdicts) - inapplicable} with require_path false"
    )


#: (case, trace) pairs handed to the executor at once while the traces stream in.
_CHUNK = 4096

#: A (case, trace) pair to check: (case position, arrival, case, the trace or a conversation).
_Pair = tuple[int, int, Case, Trace | tuple[Trace, ...]]


@dataclass(frozen=True, slots=True)
class _Check:
    """The checks of one (case, trace) pair: a unit of the executor (it pickles)."""

    tools: ToolsConfig | None
    quote_threshold: float

    def now(self, unit: tuple[Case, Trace | tuple[Trace, ...]]) -> CaseVerdict:
        """The verdict of ``unit``, in this thread."""
        case, trace = unit
        run = trace if isinstance(trace, tuple) else (trace,)
        return validate_conversation(case, run, self.tools, quote_threshold=self.quote_threshold)

    async def __call__(self, unit: tuple[Case, Trace | tuple[Trace, ...]]) -> CaseVerdict:
        return self.now(unit)


class _Join:
    """Traces joined to the cases as they stream in, and the verdicts of the pairs checked.

    :meth:`chunks` hands out the pairs to check, at most ``_CHUNK`` at a time; the caller
    checks each chunk (on an executor, or in this thread) and hands the verdicts back with
    :meth:`checked` before asking for the next one; :meth:`report` summarises.
    """

    def __init__(self, cases: Sequence[Case], on_match: Callable[[Trace], object] | None) -> None:
        self.cases = cases
        self.on_match = on_match
        self.entries: dict[str, list[tuple[int, Case]]] = {}
        for position, case in enumerate(cases):
            self.entries.setdefault(case.case_id, []).append((position, case))
        self.found: list[tuple[int, int, CaseVerdict]] = []
        self.unmatched: list[str] = []
        self.incomplete: dict[str, str] = {}
        self.unmatched_count = 0
        self.arrivals = 0

    def chunks(self, traces: Iterable[Trace]) -> Iterator[list[_Pair]]:
        """The (case, trace) pairs to check, in chunks; ``traces`` is read once, lazily."""
        chunk: list[_Pair] = []
        # (case id, conversation id) -> (root start, arrival, trace) of each turn trace
        conversations: dict[tuple[str, str | None], list[tuple[int, int, Trace]]] = {}
        by_question = question_index(self.cases)
        for arrival, trace in enumerate(traces):
            self.arrivals = arrival + 1
            case_id = trace.request.case_id
            if case_id is None and (joined := case_by_question(trace, by_question)) is not None:
                case_id = joined.case_id  # a trace of another instrumentation: by its question
            matching = self.entries.get(case_id) if case_id is not None else None
            if not matching or case_id is None:
                self.unmatched_count += 1
                if len(self.unmatched) < UNMATCHED_SAMPLE:
                    self.unmatched.append(trace.trace_id)
                continue
            if (lost := trace.incomplete) is not None:  # lost evidence is never a verdict
                self.incomplete.setdefault(case_id, f"trace {trace.trace_id}: {lost.message}")
                continue
            if self.on_match is not None:
                self.on_match(trace)
            session = trace.request.session_id
            if session is not None or any(case.turns for _, case in matching):
                turn = (conversation_order(trace), arrival, trace)
                conversations.setdefault((case_id, session), []).append(turn)
                continue
            chunk.extend((position, arrival, case, trace) for position, case in matching)
            if len(chunk) >= _CHUNK:
                yield chunk
                chunk = []
        for (case_id, _), turns in conversations.items():
            if case_id in self.incomplete:
                continue  # a turn of the conversation is incomplete: so is the conversation
            turns.sort(key=lambda item: (item[0], item[1]))
            run = tuple(trace for *_, trace in turns)
            first = min(arrival for _, arrival, _ in turns)
            chunk.extend((position, first, case, run) for position, case in self.entries[case_id])
            if len(chunk) >= _CHUNK:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def checked(self, chunk: Sequence[_Pair], verdicts: Sequence[CaseVerdict]) -> None:
        """Keep the verdicts of ``chunk`` (in its order); its traces are let go."""
        self.found.extend((pos, arr, v) for (pos, arr, *_), v in zip(chunk, verdicts, strict=True))

    def report(
        self,
        tools: ToolsConfig | None,
        settings: StatsSettings | None,
        quote_threshold: float,
        notes: Sequence[str],
    ) -> PathReport:
        """The report of every pair checked: verdicts in case-file order, then arrival."""
        self.found.sort(key=lambda item: (item[0], item[1]))
        verdicts = [verdict for _, _, verdict in self.found]
        scored = {position for position, _, _ in self.found}
        missing = [
            case.case_id
            for position, case in enumerate(self.cases)
            if position not in scored and case.case_id not in self.incomplete
        ]
        return PathReport(
            verdicts=tuple(verdicts),
            metrics=compute_metrics(verdicts, settings),
            missing_traces=tuple(missing),
            incomplete_traces=self.incomplete,
            unmatched_traces=tuple(self.unmatched),
            unmatched_count=self.unmatched_count,
            quote_threshold=quote_threshold,
            tools_config=None if tools is None else tools.source,
            notes=tuple(notes),
            not_applicable=sum(v.status is PathStatus.NOT_APPLICABLE for v in verdicts),
            nothing_measured=_nothing_measured(
                verdicts, len(self.cases), self.arrivals, self.incomplete
            ),
        )


async def validate_traces_async(
    traces: Iterable[Trace],
    cases: Sequence[Case],
    tools: ToolsConfig | None = None,
    *,
    settings: StatsSettings | None = None,
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD,
    notes: Sequence[str] = (),
    executor: Executor | None = None,
    on_match: Callable[[Trace], object] | None = None,
) -> PathReport:
    """Join traces to cases by ``request.case_id`` (a trace of another instrumentation that
    records none, to the one case of its question) and validate every pair.

    Several traces of one case (repeated runs) each get a verdict, but the traces of one
    case sharing a conversation id (``request.session_id``), and every trace of a multi-turn
    case (:attr:`Case.turns`) without one, are the turns of one conversation run: one verdict,
    checked turn by turn (:func:`validate_conversation`). Those turn traces are held until
    the input ends (only the traces of a case, never the unmatched ones); give repeated
    runs of a multi-turn case distinct conversation ids. ``traces`` is read once,
    lazily: each (case, trace) pair is a unit of ``executor`` (default: local, one at a
    time), handed over in chunks of at most ``_CHUNK`` pairs, and the traces are let go once
    checked, so memory holds the cases, the verdicts and one chunk, never every trace
    (unmatched traces are counted, and the first :data:`UNMATCHED_SAMPLE` of their ids
    kept). Verdicts come in case-file order, the runs of one case in arrival order. Awaited
    in the caller's event loop (a notebook, an async service, an analysis's ``run``): it
    starts none of its own.

    ``on_match`` (when given) is called with every trace joined to a case, as it arrives
    (e.g. to note its root span for a write-back, :func:`groundtrace.analyzer.paths.run`).
    """
    join = _Join(cases, on_match)
    check = _Check(tools, quote_threshold)
    runner = executor or LocalExecutor(1)
    for chunk in join.chunks(traces):
        join.checked(chunk, await runner.map(check, [(case, trace) for *_, case, trace in chunk]))
    return join.report(tools, settings, quote_threshold, notes)


@deprecated(
    since="0.2.0",
    remove_in="0.3.0",
    use="groundtrace.analyzer.paths.validate_traces_async (awaited), or "
    "groundtrace.analyzer.run_analysis(paths.ANALYSIS, ...) for trace files",
)
def validate_traces(
    traces: Iterable[Trace],
    cases: Sequence[Case],
    tools: ToolsConfig | None = None,
    *,
    settings: StatsSettings | None = None,
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD,
    notes: Sequence[str] = (),
    executor: Executor | None = None,
    on_match: Callable[[Trace], object] | None = None,
) -> PathReport:
    """:func:`validate_traces_async` without an event loop: every pair checked in this
    thread, one at a time (deprecated: await :func:`validate_traces_async`).

    Raises:
        ConfigError: ``executor`` given (an executor is awaited: use
            :func:`validate_traces_async`).
    """
    if executor is not None:
        raise ConfigError(
            "validate_traces checks in this thread: await validate_traces_async(..., "
            "executor=...) to run the checks on an executor",
            field="executor",
        )
    join = _Join(cases, on_match)
    check = _Check(tools, quote_threshold)
    for chunk in join.chunks(traces):
        join.checked(chunk, [check.now((case, trace)) for *_, case, trace in chunk])
    return join.report(tools, settings, quote_threshold, notes)
