"""Spans lost to damaged input, and the traces they leave incomplete.

A line the readers cannot read (invalid JSON, a torn write, a rejected span) may hold spans
of traces whose other spans were read. Built without them, such a trace looks whole: a lost
tool call reads as "no tool call ran", a lost answer as an empty answer. So every loss is
recorded in the :class:`~groundtrace.collectors.readers.ReadReport` with the trace ids that
can still be recovered from the damaged bytes (``"traceId":"<32 hex>"``), and each trace read
with it gets a ``lost_spans`` finding naming the damaged line; the analyses treat such a
trace as incomplete (:attr:`~groundtrace.collectors.model.Trace.incomplete`), never as a
verdict.

A trace whose root span was lost still carries its case id when the damaged bytes show it
(the ``groundtrace.request.case_id`` attribute after the span's ``traceId``), and a trace
wholly lost becomes a trace with no span, its case id and the finding: every analysis then
names the case *not evaluable, incomplete trace* instead of not finding it.

When no trace id can be recovered (a line with nothing readable, a broken protobuf stream),
the traces with a span on the line before or after the damaged one, or with spans on both
sides of it, in the same file, are marked: a span ends before its parent, so an exporter
writes a trace's lost spans next to, or between, its other spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import msgspec

from groundtrace.collectors.model import Finding, FindingKind, Request, Trace
from groundtrace.sdk import semconv as sc

if TYPE_CHECKING:
    from ._files import ReadReport

__all__ = ["is_rejected_span", "lost_in", "mark_incomplete", "span_trace_id"]

_TRACE_ID: Final = rb'"trace_?[Ii]d"[ \t]*:[ \t]*"([0-9A-Fa-f]{32})"'
_CASE_ID: Final = (
    rb'"key"[ \t]*:[ \t]*"' + re.escape(sc.GT_REQUEST_CASE_ID.encode())
    + rb'"[ \t]*,[ \t]*"value"[ \t]*:[ \t]*\{[ \t]*"stringValue"[ \t]*:[ \t]*"([^"\\]{1,200})"'
)  # fmt: skip
_IDS: Final = re.compile(_TRACE_ID + rb"|" + _CASE_ID)
_SPAN_PATH: Final = re.compile(
    r"^\$?\.?resourceSpans\[(\d+)\]\.scopeSpans\[(\d+)\]\.spans\[(\d+)\]"
)
#: the paths of the errors that reject a span (its ids); other fields are dropped, not the span
_REJECTED: Final = re.compile(r"\.spans\[\d+\](?:\.(?:traceId|spanId|parentSpanId))?$")


def is_rejected_span(where: str | None) -> bool:
    """Whether a decode error at JSON path ``where`` rejected a whole span."""
    return where is not None and _REJECTED.search(where) is not None


def lost_in(raw: bytes) -> dict[str, str | None]:
    """The trace ids written in ``raw`` (lower-case hex, in order of appearance), each with
    the case id written after it in the same span, if any."""
    found: dict[str, str | None] = {}
    current: str | None = None
    for match in _IDS.finditer(raw):
        trace_id, case_id = match.groups()
        if trace_id is not None:
            current = trace_id.decode().lower()
            found.setdefault(current, None)
        elif current is not None and found[current] is None:
            found[current] = case_id.decode("utf-8", "replace")
    return found


def span_trace_id(obj: object, where: str | None) -> str | None:
    """The hex trace id of the span at JSON path ``where`` in an export object, if readable."""
    match = _SPAN_PATH.match(where or "")
    if match is None:
        return None
    node: Any = obj
    try:
        r, s, i = (int(g) for g in match.groups())
        node = node["resourceSpans"][r]["scopeSpans"][s]["spans"][i]["traceId"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(node, str) and len(node) == 32:
        try:
            int(node, 16)
        except ValueError:
            return None
        return node.lower()
    return None


def mark_incomplete(traces: Iterator[Trace], report: ReadReport) -> Iterator[Trace]:
    """``traces``, each one whose spans were partly lost (per ``report``) with a
    ``lost_spans`` finding. Reading is lazy: a trace is checked against the losses seen by
    the time it is built, which is after its last span was read."""
    seen: set[str] = set()
    for trace in traces:
        seen.add(trace.trace_id)
        where = report.lost_traces.get(trace.trace_id) or _near_unknown(trace, report)
        if where is None:
            yield trace
            continue
        request = trace.request
        case_id = report.lost_case_ids.get(trace.trace_id)
        if request.case_id is None and case_id is not None:  # its root was lost
            request = msgspec.structs.replace(request, case_id=case_id)
        findings = (*trace.findings, _lost(where))
        yield msgspec.structs.replace(trace, request=request, findings=findings)
    for trace_id, where in report.lost_traces.items():  # wholly lost: no span was read
        if trace_id not in seen:
            request = Request(trace_id, case_id=report.lost_case_ids.get(trace_id))
            yield Trace(request, findings=(_lost(where),))


def _lost(where: str) -> Finding:
    return Finding(
        FindingKind.LOST_SPANS,
        f"spans of this trace may be on {where}, which could not be read: the trace is incomplete",
        location=where,
    )


def _near_unknown(trace: Trace, report: ReadReport) -> str | None:
    if not report.lost_unknown:
        return None
    lines: dict[str, list[int]] = {}
    for step in trace.steps:
        name, _, line = (step.location or "").rpartition(":")
        if name and line.isdigit():
            lines.setdefault(name, []).append(int(line))
    for name, lost in report.lost_unknown:
        seen = lines.get(name)
        if seen and (min(seen) - 1 <= lost <= max(seen) + 1):
            return f"{name}:{lost}"
    return None
