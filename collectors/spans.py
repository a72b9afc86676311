"""The raw span record every source is decoded into before normalisation.

Readers (OTLP-JSON, OTLP protobuf, the receiver's files, Phoenix's REST API, transcripts)
each turn their input into :class:`SpanRecord` objects; the normalisers then group them by
trace and rebuild the trace model. Keeping this one flat shape between the two halves is
what lets every source share the same normalisation and the same findings.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

__all__ = [
    "AttributeValue",
    "BadField",
    "LogRecord",
    "SourceLocation",
    "SpanEvent",
    "SpanRecord",
    "SpanStatus",
]

#: An OTLP attribute value after decoding: str, bool, int, float, or a homogeneous list.
AttributeValue = str | bool | int | float | list[Any] | None


class SourceLocation(Struct, frozen=True, gc=False):
    """Where a span came from: a file and line, a receiver batch, or a remote API."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return self.source if self.line is None else f"{self.source}:{self.line}"


class SpanStatus(Struct, frozen=True, gc=False):
    """OTLP status: code is ``"UNSET"``, ``"OK"`` or ``"ERROR"``."""

    code: str = "UNSET"
    message: str = ""


class SpanEvent(Struct, frozen=True, gc=False):
    """A span event (exceptions are recorded as events named ``exception``)."""

    name: str
    time_unix_nano: int
    attributes: dict[str, AttributeValue] = {}


class BadField(Struct, frozen=True, gc=False):
    """A field of a span that could not be read and was dropped (the span itself is kept).

    ``field`` is its path in the input (a JSON path for OTLP/JSON), ``message`` says why.
    """

    field: str
    message: str


class SpanRecord(Struct, frozen=True, gc=False):
    """One span, decoded but not yet interpreted.

    Ids are lower-case hex strings (32 chars for trace ids, 16 for span ids), as in the OTLP
    JSON encoding. ``parent_span_id`` is ``None`` for a root span. ``bad_fields`` lists the
    fields that were malformed and dropped (read as absent); normalisation turns each into a
    finding of the trace. Records are frozen and
    not tracked by the cyclic garbage collector: they hold no reference cycles (readers
    build them from decoded values), so the collector never needs to walk them.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_time_unix_nano: int
    end_time_unix_nano: int
    attributes: dict[str, AttributeValue] = {}
    status: SpanStatus = field(default_factory=SpanStatus)
    events: list[SpanEvent] = []
    kind: str = "INTERNAL"
    resource: dict[str, AttributeValue] = {}
    scope_name: str = ""
    scope_version: str = ""
    location: SourceLocation | None = None
    bad_fields: tuple[BadField, ...] = ()


class LogRecord(Struct, frozen=True, gc=False):
    """One OTLP log record, decoded; normalisation joins it to its span as an event.

    GenAI instrumentations send events as log records (the official openai instrumentation
    sends message content this way by default; ``gen_ai.evaluation.result`` is one too).
    ``event_name`` is the record's ``event_name`` field, else its ``event.name`` attribute.
    ``body`` is the decoded body (a map for GenAI events). Readers only yield records that
    carry both a trace id and a span id (the others cannot be joined and are reported).
    """

    trace_id: str
    span_id: str
    event_name: str
    time_unix_nano: int
    attributes: dict[str, AttributeValue] = {}
    body: Any = None
    location: SourceLocation | None = None
