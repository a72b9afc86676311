"""Streaming grouping of spans into traces with bounded memory."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator

from groundtrace.collectors.model import Finding, FindingKind, Request, Trace
from groundtrace.collectors.spans import LogRecord, SpanRecord

from ._build import build_trace
from ._logs import join_logs

__all__ = ["DEFAULT_MAX_PENDING_SPANS", "DEFAULT_WINDOW", "build_traces"]

#: Default completion window, in spans (see :func:`build_traces`).
DEFAULT_WINDOW = 10_000
#: Default cap on the spans held while their traces are incomplete (see :func:`build_traces`):
#: what bounds memory when traces never complete (no root span, or spans spread over the
#: input). Five windows: SDK batches keep a trace's spans together, so a read of SDK output
#: stays about one window deep and the cap is never reached.
DEFAULT_MAX_PENDING_SPANS = 5 * DEFAULT_WINDOW
#: How many of the last emitted trace ids are remembered, to flag a late span (bounded:
#: the stream may be endless; about 1.2 MB, filled within the first ~10k traces, so peak
#: memory does not grow with the input past that). A trace is emitted only after a window of
#: spans without it, so a late span is flagged up to at least a window after that.
EMITTED_MEMORY = 10_000


class _Emitted:
    """The ids of the last :data:`EMITTED_MEMORY` traces emitted."""

    __slots__ = ("ids", "order")

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.order: deque[str] = deque()

    def __contains__(self, trace_id: str) -> bool:
        return trace_id in self.ids

    def add(self, trace_id: str) -> None:
        if trace_id in self.ids:
            return
        self.ids.add(trace_id)
        self.order.append(trace_id)
        if len(self.order) > EMITTED_MEMORY:
            self.ids.discard(self.order.popleft())


class _Pending:
    __slots__ = ("last_seen", "logs", "records", "root_seen")

    def __init__(self) -> None:
        self.records: list[SpanRecord] = []
        self.logs: list[LogRecord] = []
        self.root_seen = False
        self.last_seen = 0

    def size(self) -> int:
        return len(self.records) + len(self.logs)


def build_traces(
    records: Iterable[SpanRecord | LogRecord],
    *,
    window: int = DEFAULT_WINDOW,
    max_pending_spans: int | None = DEFAULT_MAX_PENDING_SPANS,
) -> Iterator[Trace]:
    """Group a stream of spans by trace id and yield one :class:`Trace` per trace.

    Memory is bounded by ``max_pending_spans`` span records (plus the ids of the last
    :data:`EMITTED_MEMORY` traces), whatever the size of the input. Completion policy:

    * a trace is emitted once its root span (no parent) has been seen **and** no span of it
      has arrived during the last ``window`` spans of the stream;
    * at the end of the input every trace still pending is emitted (traces without a root
      get a ``no_root`` finding);
    * when more than ``max_pending_spans`` spans are pending, the traces seen least
      recently are emitted early, root or not (``None``: no cap, memory unbounded);
    * log records (:class:`~groundtrace.collectors.spans.LogRecord`) count like spans and
      are joined to the span they name as its events (an ``orphan_log`` finding when the
      trace lacks that span);
    * a span arriving for a trace id that was already emitted starts a new partial trace of
      the same id, which carries a ``split_trace`` finding (never a silent drop); the last
      :data:`EMITTED_MEMORY` emitted ids are remembered (older: the partial trace still
      carries ``no_root`` unless the late span is a root).

    Traces are yielded in the order they complete; at the end of input, in the order they
    were first seen.

    Args:
        records: the spans, in any order (an iterator is consumed lazily).
        window: completion window in spans (>= 1).
        max_pending_spans: hard cap on buffered spans (``None``: no cap).

    Raises:
        ValueError: ``window`` or ``max_pending_spans`` is not positive.
    """
    if window < 1:
        raise ValueError("window must be >= 1")
    if max_pending_spans is not None and max_pending_spans < 1:
        raise ValueError("max_pending_spans must be >= 1")
    pending: dict[str, _Pending] = {}  # in first-seen order
    recency: OrderedDict[str, None] = OrderedDict()  # least recently seen first
    emitted = _Emitted()
    buffered = 0
    check_every = max(1, min(window, 1024))
    index = 0
    for index, record in enumerate(records, start=1):
        trace_id = record.trace_id
        group = pending.get(trace_id)
        if group is None:
            group = pending[trace_id] = _Pending()
            recency[trace_id] = None
        else:
            recency.move_to_end(trace_id)
        if isinstance(record, LogRecord):
            group.logs.append(record)
        else:
            group.records.append(record)
            if not record.parent_span_id:
                group.root_seen = True
        group.last_seen = index
        buffered += 1
        if index % check_every == 0:
            horizon = index - window
            done = [t for t, g in pending.items() if g.root_seen and g.last_seen <= horizon]
            for trace_id in done:
                del recency[trace_id]
                group = pending.pop(trace_id)
                buffered -= group.size()
                yield _emit(trace_id, group, emitted)
        while max_pending_spans is not None and buffered > max_pending_spans:
            trace_id, _ = recency.popitem(last=False)
            group = pending.pop(trace_id)
            buffered -= group.size()
            yield _emit(trace_id, group, emitted)
    for trace_id, group in list(pending.items()):
        yield _emit(trace_id, group, emitted)


def _emit(trace_id: str, group: _Pending, emitted: _Emitted) -> Trace:
    extra: tuple[Finding, ...] = ()
    if trace_id in emitted:
        extra = (
            Finding(
                FindingKind.SPLIT_TRACE,
                f"{group.size()} span(s) of trace {trace_id} arrived after the trace "
                "was completed; they form this partial trace",
            ),
        )
    emitted.add(trace_id)
    records, orphans = join_logs(group.records, group.logs)
    if not records:  # only log records named this trace: its spans never arrived
        missing = Finding(FindingKind.NO_ROOT, f"no span of trace {trace_id} was read")
        return Trace(Request(trace_id), findings=(*extra, missing, *orphans))
    return build_trace(records, (*extra, *orphans))
