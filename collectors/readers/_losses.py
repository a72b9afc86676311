"""Spans lost to damaged input, and the traces they leave incomplete.

A line the readers cannot read (invalid JSON, a torn write, a rejected span) may hold spans
of traces whose other spans were read. Built without them, such a trace looks whole: a lost
tool call reads as "no tool call ran", a lost answer as an empty answer. So every loss is
recorded in the :class:`~groundtrace.collectors.readers.ReadReport` with the trace ids that
can still be recovered from the damaged bytes (``"traceId":"<32 hex>"``), and each trace read
with it gets a ``lost_spans`` finding naming the damaged line; the analyses treat such a
trace as incomplete (:attr:`~groundtrace.collectors.model.Trace.incomplete`), never as a
verdict.

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

from groundtrace.collectors.model import Finding, FindingKind, Trace

if TYPE_CHECKING:
    from ._files import ReadReport

__all__ = ["is_rejected_span", "mark_incomplete", "span_trace_id", "trace_ids_in"]

_TRACE_ID: Final = re.compile(rb'"trace_?[Ii]d"[ \t]*:[ \t]*"([0-9A-Fa-f]{32})"')
_SPAN_PATH: Final = re.compile(
    r"^\$?\.?resourceSpans\[(\d+)\]\.scopeSpans\[(\d+)\]\.spans\[(\d+)\]"
)
#: the paths of the errors that reject a span (its ids); other fields are dropped, not the span
_REJECTED: Final = re.compile(r"\.spans\[\d+\](?:\.(?:traceId|spanId|parentSpanId))?$")


def is_rejected_span(where: str | None) -> bool:
    """Whether a decode error at JSON path ``where`` rejected a whole span."""
    return where is not None and _REJECTED.search(where) is not None


def trace_ids_in(raw: bytes) -> list[str]:
    """The distinct trace ids written in ``raw`` (lower-case hex), in order of appearance."""
    return list(dict.fromkeys(m.group(1).decode().lower() for m in _TRACE_ID.finditer(raw)))


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
    for trace in traces:
        where = report.lost_traces.get(trace.trace_id) or _near_unknown(trace, report)
        if where is None:
            yield trace
            continue
        finding = Finding(
            FindingKind.LOST_SPANS,
            f"spans of this trace may be on {where}, which could not be read: the trace "
            "is incomplete",
            location=where,
        )
        yield msgspec.structs.replace(trace, findings=(*trace.findings, finding))


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
