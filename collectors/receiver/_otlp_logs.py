"""OTLP log requests (``POST /v1/logs``) between their protobuf and OTLP/JSON encodings.

Stored like trace batches: one ``ExportLogsServiceRequest`` per line of OTLP/JSON, as the
OpenTelemetry Collector's ``file`` exporter writes it (hex ids, 64-bit integers as decimal
strings, default-valued fields left out), in the same file as the spans, so the readers join
each GenAI event sent as a log record to its span.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs

from ._otlp_json import (
    BodyDecodeError,
    _any_value,
    _as_list,
    _attributes,
    _resource,
    _scope,
    envelope,
    load_json,
    parse_dict,
    parse_protobuf,
)

__all__ = ["logs_to_json_line", "parse_json_logs", "parse_protobuf_logs", "validate_logs"]

_ID_SIZES = {"traceId": 16, "spanId": 8, "trace_id": 16, "span_id": 8}


def parse_protobuf_logs(body: bytes) -> ExportLogsServiceRequest:
    """Decode a binary protobuf ``ExportLogsServiceRequest``.

    Raises:
        BodyDecodeError: the bytes are not a valid message.
    """
    return parse_protobuf(ExportLogsServiceRequest(), body)


def _ids_hex_to_b64(records: list[dict[str, Any]], where: str) -> None:
    for index, record in enumerate(records):
        for key in _ID_SIZES:
            value = record.get(key)
            if isinstance(value, str):
                try:
                    record[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                except ValueError:
                    message = f"{where}[{index}].{key}: id {value!r} is not hex-encoded"
                    raise BodyDecodeError(message) from None


def parse_json_logs(body: bytes) -> ExportLogsServiceRequest:
    """Decode an OTLP/JSON ``ExportLogsServiceRequest`` (hex ids; either key spelling).

    Raises:
        BodyDecodeError: not JSON, not an object, a non-hex id, or a field of the wrong type.
    """
    document = load_json(body)
    for rl_key in ("resourceLogs", "resource_logs"):
        for r, resource_logs in enumerate(_as_list(document.get(rl_key))):
            for sl_key in ("scopeLogs", "scope_logs"):
                for s, scope_logs in enumerate(_as_list(resource_logs.get(sl_key))):
                    for lr_key in ("logRecords", "log_records"):
                        where = f"{rl_key}[{r}].{sl_key}[{s}].{lr_key}"
                        _ids_hex_to_b64(_as_list(scope_logs.get(lr_key)), where)
    return parse_dict(document, ExportLogsServiceRequest())


def validate_logs(request: ExportLogsServiceRequest) -> int:
    """Check the ids of every log record and return the number of records.

    Log records need no trace context, but ids that are there must have their sizes.

    Raises:
        BodyDecodeError: a trace id neither empty nor 16 bytes, or a span id neither empty
            nor 8 bytes (the first offending record is named).
    """
    count = 0
    for r, resource_logs in enumerate(request.resource_logs):
        for s, scope_logs in enumerate(resource_logs.scope_logs):
            for i, record in enumerate(scope_logs.log_records):
                problem = ""
                if record.trace_id and len(record.trace_id) != 16:
                    problem = f"traceId must be empty or 16 bytes, got {len(record.trace_id)}"
                elif record.span_id and len(record.span_id) != 8:
                    problem = f"spanId must be empty or 8 bytes, got {len(record.span_id)}"
                if problem:
                    where = f"resourceLogs[{r}].scopeLogs[{s}].logRecords[{i}]"
                    raise BodyDecodeError(f"{where}: {problem}")
            count += len(scope_logs.log_records)
    return count


def _record(record: LogRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if record.time_unix_nano:
        out["timeUnixNano"] = str(record.time_unix_nano)
    if record.observed_time_unix_nano:
        out["observedTimeUnixNano"] = str(record.observed_time_unix_nano)
    if record.severity_number:
        out["severityNumber"] = record.severity_number
    if record.severity_text:
        out["severityText"] = record.severity_text
    if record.HasField("body"):
        out["body"] = _any_value(record.body)
    if record.attributes:
        out["attributes"] = _attributes(record.attributes)
    if record.dropped_attributes_count:
        out["droppedAttributesCount"] = record.dropped_attributes_count
    if record.flags:
        out["flags"] = record.flags
    if record.trace_id:
        out["traceId"] = record.trace_id.hex()
    if record.span_id:
        out["spanId"] = record.span_id.hex()
    if record.event_name:
        out["eventName"] = record.event_name
    return out


def _scope_logs(scope_logs: ScopeLogs) -> dict[str, Any]:
    records = [_record(r) for r in scope_logs.log_records]
    return envelope("scope", _scope(scope_logs.scope), "logRecords", records, scope_logs.schema_url)


def _resource_logs(resource_logs: ResourceLogs) -> dict[str, Any]:
    scopes = [_scope_logs(sl) for sl in resource_logs.scope_logs]
    resource = _resource(resource_logs.resource)
    return envelope("resource", resource, "scopeLogs", scopes, resource_logs.schema_url)


def logs_to_json_line(request: ExportLogsServiceRequest) -> bytes:
    """One compact UTF-8 OTLP/JSON line (with the trailing newline) of a logs request."""
    line: bytes = orjson.dumps(
        {"resourceLogs": [_resource_logs(rl) for rl in request.resource_logs]}
    )
    return line + b"\n"
