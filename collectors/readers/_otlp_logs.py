"""Decode OTLP log records (``ExportLogsServiceRequest``, OTLP/JSON or protobuf).

GenAI instrumentations send events as log records joined to their span by trace and span id;
normalisation attaches each to its span as an event. A record without a trace id or span id
cannot be joined to anything: it is reported (file, line, JSON path) and not yielded.

A protobuf stream holds one signal per message; a message is read as logs when it does not
read as a trace export (it fails to parse, or holds spans none of which has ids, which is
what log records look like through the trace schema) and does read as a logs export.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from groundtrace.collectors.spans import (
    AttributeValue,
    BadField,
    LogRecord,
    SourceLocation,
    SpanRecord,
)
from groundtrace.sdk import semconv as sc

from ._otlp_json import SpanDecodeError, _list, decode_any_value, decode_id, objects
from ._otlp_json import _attributes as _json_attributes
from ._otlp_json import _nanos as _json_nanos
from ._otlp_proto import _attributes as _proto_attributes
from ._otlp_proto import _value as _proto_value
from ._otlp_proto import decode_message

__all__ = ["LOGS_KEY", "decode_frame", "decode_logs_message", "decode_logs_request"]

#: The key of an OTLP/JSON logs export (what tells a logs line from a traces line).
LOGS_KEY: Final = b'"resourceLogs"'
_UNJOINABLE: Final = "log record has no trace id or span id; it cannot be joined to a span"


def _log_record(
    trace_id: str,
    span_id: str,
    event_name: str,
    time: int,
    attributes: dict[str, AttributeValue],
    body: Any,
    location: SourceLocation,
) -> LogRecord:
    name = event_name or attributes.get(sc.EVENT_NAME)
    return LogRecord(
        trace_id=trace_id,
        span_id=span_id,
        event_name=name if isinstance(name, str) else "",
        time_unix_nano=time,
        attributes=attributes,
        body=body,
        location=location,
    )


def _json_record(raw: Any, where: str, location: SourceLocation) -> LogRecord:
    if not isinstance(raw, dict):
        raise SpanDecodeError("log record must be an object", where)
    trace_id = decode_id(raw.get("traceId", ""), 16, f"{where}.traceId")
    span_id = decode_id(raw.get("spanId", ""), 8, f"{where}.spanId")
    if not trace_id or not span_id:
        raise SpanDecodeError(_UNJOINABLE, where)
    bad: list[BadField] = []
    attributes = _json_attributes(raw.get("attributes"), f"{where}.attributes", bad)
    time = raw.get("timeUnixNano") or raw.get("observedTimeUnixNano") or 0
    nanos = _json_nanos(time, f"{where}.timeUnixNano", bad)
    try:
        body = decode_any_value(raw.get("body"))
    except (RecursionError, TypeError, ValueError, KeyError, AttributeError):
        bad.append(BadField(f"{where}.body", "malformed body; dropped"))
        body = None
    if bad:
        raise SpanDecodeError("; ".join(b.message for b in bad), bad[0].field)
    name = raw.get("eventName", "")
    return _log_record(
        trace_id, span_id, name if isinstance(name, str) else "", nanos, attributes, body, location
    )


def decode_logs_request(
    obj: Any,
    location: SourceLocation,
    errors: list[SpanDecodeError],
    notes: Mapping[str, Sequence[BadField]] | None = None,
) -> list[LogRecord]:
    """All joinable log records of one ``ExportLogsServiceRequest`` JSON object.

    A record without ids, or with a malformed field, is reported in ``errors`` and skipped
    (a log record is one event: half of one would be read as another). A malformed envelope
    raises :class:`SpanDecodeError`. ``notes`` are fields repaired before decoding (the
    record keeps the repaired value), by the JSON path of their log record, scope or
    resource (or ``$``): each is reported in ``errors``.
    """
    if not isinstance(obj, dict):
        raise SpanDecodeError("expected an ExportLogsServiceRequest object", "$")
    notes = notes or {}
    out: list[LogRecord] = []
    for rwhere, resource_logs in objects(obj, "resourceLogs", "$"):
        _noted(notes, rwhere, errors)
        for swhere, scope_logs in objects(resource_logs, "scopeLogs", rwhere):
            _noted(notes, swhere, errors)
            for i, raw in enumerate(_list(scope_logs, "logRecords", swhere)):
                where = f"{swhere}.logRecords[{i}]"
                _noted(notes, where, errors)
                try:
                    out.append(_json_record(raw, where, location))
                except SpanDecodeError as exc:
                    errors.append(exc)
    _noted(notes, "$", errors)
    return out


def _noted(
    notes: Mapping[str, Sequence[BadField]], where: str, errors: list[SpanDecodeError]
) -> None:
    errors.extend(SpanDecodeError(b.message, b.field) for b in notes.get(where, ()))


def decode_logs_message(
    message: ExportLogsServiceRequest, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[LogRecord]:
    """All joinable log records of a parsed protobuf ``ExportLogsServiceRequest``; records
    without valid ids are reported in ``errors``."""
    out: list[LogRecord] = []
    for r, resource_logs in enumerate(message.resource_logs):
        for s, scope_logs in enumerate(resource_logs.scope_logs):
            for i, record in enumerate(scope_logs.log_records):
                if len(record.trace_id) != 16 or len(record.span_id) != 8:
                    where = f"resource_logs[{r}].scope_logs[{s}].log_records[{i}]"
                    errors.append(SpanDecodeError(_UNJOINABLE, where))
                    continue
                body = _proto_value(record.body) if record.HasField("body") else None
                out.append(
                    _log_record(
                        record.trace_id.hex(),
                        record.span_id.hex(),
                        record.event_name,
                        record.time_unix_nano or record.observed_time_unix_nano,
                        _proto_attributes(record.attributes),
                        body,
                        location,
                    )
                )
    return out


def _log_count(message: ExportLogsServiceRequest) -> int:
    return sum(len(s.log_records) for r in message.resource_logs for s in r.scope_logs)


def decode_frame(
    data: bytes, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[SpanRecord] | list[LogRecord]:
    """The spans of one protobuf message, or its log records when it is a logs export.

    Raises:
        SpanDecodeError: the bytes are neither a trace export nor a logs export.
    """
    span_errors: list[SpanDecodeError] = []
    failure: SpanDecodeError | None = None
    try:
        spans = decode_message(data, location, span_errors)
    except SpanDecodeError as exc:
        spans, failure = [], exc
    if spans or (failure is None and not span_errors):
        errors.extend(span_errors)
        return spans
    logs = ExportLogsServiceRequest()
    try:
        logs.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError):
        pass
    else:
        if _log_count(logs):
            return decode_logs_message(logs, location, errors)
    if failure is not None:
        raise failure
    errors.extend(span_errors)
    return spans
