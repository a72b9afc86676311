"""OTLP log requests (``POST /v1/logs``) between their protobuf and OTLP/JSON encodings.

Stored like trace batches: one ``ExportLogsServiceRequest`` per line of OTLP/JSON, as the
OpenTelemetry Collector's ``file`` exporter writes it (hex ids, 64-bit integers as decimal
strings, default-valued fields left out), in the same file as the spans, so the readers join
each GenAI event sent as a log record to its span. Decoding, the id checks and the layout are
the traces' (:class:`._otlp_json.Signal`); only a log record's own fields are written here.
"""

from __future__ import annotations

from typing import Any, Final

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from groundtrace.sdk.otlp_format import put_attributes

from ._otlp_json import IdRule, Signal, any_value_json, attributes_json

__all__ = ["LOGS", "parse_json_logs"]


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
        out["body"] = any_value_json(record.body)
    put_attributes(out, attributes_json(record.attributes), record.dropped_attributes_count)
    if record.flags:
        out["flags"] = record.flags
    if record.trace_id:
        out["traceId"] = record.trace_id.hex()
    if record.span_id:
        out["spanId"] = record.span_id.hex()
    if record.event_name:
        out["eventName"] = record.event_name
    return out


#: Log exports: log records need no trace context, but ids that are there must have their sizes.
LOGS: Final[Signal[ExportLogsServiceRequest]] = Signal(
    message=ExportLogsServiceRequest,
    keys=("resourceLogs", "scopeLogs", "logRecords"),
    fields=("resource_logs", "scope_logs", "log_records"),
    ids=(
        IdRule("trace_id", "traceId", 16, optional=True),
        IdRule("span_id", "spanId", 8, optional=True),
    ),
    nested=(),
    item_json=_record,
)


def parse_json_logs(body: bytes) -> ExportLogsServiceRequest:
    """Decode an OTLP/JSON ``ExportLogsServiceRequest`` (hex ids; either key spelling).

    Raises:
        BodyDecodeError: not JSON, not an object, a non-hex id, or a field of the wrong type.
    """
    return LOGS.parse_json(body)
