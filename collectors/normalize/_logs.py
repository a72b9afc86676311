"""Join log records to their spans: each becomes an event of the span it names.

GenAI events travel as log records (span events are being deprecated for them); read as
events of their span, they reach the same extractors as span events do (message content,
``gen_ai.evaluation.result``). A record naming a span the trace does not have is reported
as an ``orphan_log`` finding, never dropped silently.

A ``gen_ai.evaluation.result`` record identical to an earlier one on the same span (same
attributes and body; only its timestamps differ) is joined once: OTLP has no update, so an
analysis written back twice sends the same records again, and the copy says nothing new.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from groundtrace.collectors.model import Finding, FindingKind
from groundtrace.collectors.spans import AttributeValue, LogRecord, SpanEvent, SpanRecord
from groundtrace.sdk import semconv as sc

from ._values import location_text

__all__ = ["join_logs"]

_BODY: Final = sc.CONTENT  # where a body that is not a map is read as the event's content
_EVALUATION: Final = sc.GENAI_EVENT_EVALUATION_RESULT


def _once(logs: list[LogRecord]) -> Iterator[LogRecord]:
    """The records in order, each evaluation result identical to an earlier one left out."""
    seen: set[bytes] = set()
    for log in logs:
        if log.event_name == _EVALUATION:
            key = msgspec.json.encode((log.attributes, log.body), order="sorted")
            if key in seen:
                continue
            seen.add(key)
        yield log


def _event(log: LogRecord) -> SpanEvent:
    """The log record as a span event: its attributes, then the fields of a map body (the
    GenAI events put their content there), or a scalar body as ``content``."""
    attributes: dict[str, Any] = dict(log.attributes)
    body = log.body
    if isinstance(body, dict):
        for key, value in body.items():
            attributes.setdefault(key, value)
    elif body is not None:
        attributes.setdefault(_BODY, body)
    values: dict[str, AttributeValue] = attributes
    return SpanEvent(log.event_name, log.time_unix_nano, values)


def join_logs(
    spans: list[SpanRecord], logs: list[LogRecord]
) -> tuple[list[SpanRecord], list[Finding]]:
    """The spans with their log records appended to their events (in time order, repeated
    evaluation results once), and an ``orphan_log`` finding per record whose span is not
    among ``spans``."""
    if not logs:
        return spans, []
    by_span: dict[str, list[LogRecord]] = {}
    for log in logs:
        by_span.setdefault(log.span_id, []).append(log)
    out: list[SpanRecord] = []
    for span in spans:
        mine = by_span.pop(span.span_id, None)
        if mine is None:
            out.append(span)
            continue
        mine.sort(key=lambda log: log.time_unix_nano)
        out.append(replace(span, events=[*span.events, *map(_event, _once(mine))]))
    findings = [
        Finding(
            FindingKind.ORPHAN_LOG,
            f"log record {log.event_name or '(unnamed)'!r} names span {span_id}, which is not "
            "in the trace; it was not joined to any span",
            span_id=span_id,
            location=location_text(log.location),
        )
        for span_id, orphans in by_span.items()
        for log in orphans
    ]
    return out, findings
