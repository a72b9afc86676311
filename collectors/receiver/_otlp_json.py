"""OTLP trace requests between their protobuf and OTLP/JSON encodings.

The receiver stores every batch as one line of OTLP/JSON, exactly as the OpenTelemetry
Collector's ``file`` exporter writes it: an ``ExportTraceServiceRequest`` per line, keys in
lowerCamelCase, trace and span ids as lower-case hex, 64-bit integers as decimal strings,
enums as integers, default-valued fields left out. Protobuf bodies are decoded with the
``opentelemetry-proto`` messages and walked field by field (much faster than the generic
``json_format`` printer, which would also write ids in base64). JSON bodies are parsed into
the same message first, so both encodings are validated the same way and land on disk in one
canonical form.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, Final, TypeVar

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

__all__ = [
    "BodyDecodeError",
    "envelope",
    "load_json",
    "parse_dict",
    "parse_json_request",
    "parse_protobuf",
    "parse_protobuf_request",
    "request_to_json_line",
    "request_to_otlp_json",
    "validate_request",
]

#: Fields holding ids, in both spellings OTLP/JSON receivers must accept.
_ID_FIELDS: Final = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


class BodyDecodeError(ValueError):
    """A request body is not a valid ``ExportTraceServiceRequest`` in the claimed encoding."""


# ---------------------------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------------------------


M = TypeVar("M", bound=Message)


def parse_protobuf(message: M, body: bytes) -> M:
    """Decode a binary protobuf body into ``message`` (an empty export request).

    Raises:
        BodyDecodeError: the bytes are not a valid message of that type.
    """
    try:
        message.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        name = message.DESCRIPTOR.name
        raise BodyDecodeError(f"invalid protobuf {name}: {exc}") from exc
    return message


def parse_protobuf_request(body: bytes) -> ExportTraceServiceRequest:
    """Decode a binary protobuf ``ExportTraceServiceRequest``.

    Raises:
        BodyDecodeError: the bytes are not a valid message.
    """
    return parse_protobuf(ExportTraceServiceRequest(), body)


def load_json(body: bytes) -> dict[str, Any]:
    """The JSON object of an OTLP/JSON body.

    Raises:
        BodyDecodeError: not JSON, not an object, or nested deeper than the parser's
            recursion limit (a nesting bomb such as 100 000 ``[``); a message nested deeper
            than protobuf's limit of 100 is refused later, by :func:`parse_dict`.
    """
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BodyDecodeError(f"invalid JSON: {exc}") from exc
    except RecursionError:
        raise BodyDecodeError("invalid JSON: nested too deeply") from None
    if not isinstance(document, dict):
        raise BodyDecodeError("an OTLP/JSON request must be a JSON object")
    return document


def parse_dict(document: dict[str, Any], message: M) -> M:
    """``document`` (ids already in base64) into ``message``.

    Raises:
        BodyDecodeError: a field of the wrong type.
    """
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise BodyDecodeError(f"invalid OTLP/JSON request: {exc}") from exc
    return message


def _hex_to_b64(value: object, where: str) -> object:
    if not isinstance(value, str):
        return value  # json_format reports the wrong type precisely
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise BodyDecodeError(f"{where}: id {value!r} is not hex-encoded") from None
    return base64.b64encode(raw).decode("ascii")


def _ids_hex_to_b64(items: object, where: str) -> None:
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for key in _ID_FIELDS:
            if key in item:
                item[key] = _hex_to_b64(item[key], f"{where}[{index}].{key}")
        for links_key in ("links",):
            _ids_hex_to_b64(item.get(links_key), f"{where}[{index}].{links_key}")


def parse_json_request(body: bytes) -> ExportTraceServiceRequest:
    """Decode an OTLP/JSON ``ExportTraceServiceRequest`` (hex ids; either key spelling).

    Raises:
        BodyDecodeError: not JSON, not an object, a non-hex id, or a field of the wrong type.
    """
    document = load_json(body)
    for rs_key in ("resourceSpans", "resource_spans"):
        for r_index, resource_spans in enumerate(_as_list(document.get(rs_key))):
            for ss_key in ("scopeSpans", "scope_spans"):
                scope_list = _as_list(resource_spans.get(ss_key))
                for s_index, scope_spans in enumerate(scope_list):
                    where = f"{rs_key}[{r_index}].{ss_key}[{s_index}].spans"
                    _ids_hex_to_b64(scope_spans.get("spans"), where)
    return parse_dict(document, ExportTraceServiceRequest())


def _as_list(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def validate_request(request: ExportTraceServiceRequest) -> int:
    """Check the ids of every span and return the number of spans.

    Raises:
        BodyDecodeError: a trace id is not 16 bytes, a span id not 8, or a parent span id
            neither empty nor 8 bytes (the first offending span is named).
    """
    count = 0
    for r_index, resource_spans in enumerate(request.resource_spans):
        for s_index, scope_spans in enumerate(resource_spans.scope_spans):
            for index, span in enumerate(scope_spans.spans):
                problem = ""
                if len(span.trace_id) != 16:
                    problem = f"traceId must be 16 bytes, got {len(span.trace_id)}"
                elif len(span.span_id) != 8:
                    problem = f"spanId must be 8 bytes, got {len(span.span_id)}"
                elif span.parent_span_id and len(span.parent_span_id) != 8:
                    size = len(span.parent_span_id)
                    problem = f"parentSpanId must be empty or 8 bytes, got {size}"
                if problem:
                    where = f"resourceSpans[{r_index}].scopeSpans[{s_index}].spans[{index}]"
                    raise BodyDecodeError(f"{where}: {problem}")
            count += len(scope_spans.spans)
    return count


# ---------------------------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------------------------


def _any_value(value: AnyValue) -> dict[str, Any]:
    which = value.WhichOneof("value")
    if which == "string_value":
        return {"stringValue": value.string_value}
    if which == "int_value":
        return {"intValue": str(value.int_value)}
    if which == "bool_value":
        return {"boolValue": value.bool_value}
    if which == "double_value":
        number = value.double_value
        if math.isfinite(number):
            return {"doubleValue": number}
        text = "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
        return {"doubleValue": text}
    if which == "array_value":
        return {"arrayValue": {"values": [_any_value(v) for v in value.array_value.values]}}
    if which == "kvlist_value":
        return {"kvlistValue": {"values": _attributes(value.kvlist_value.values)}}
    if which == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    if which == "string_value_strindex":
        return {"stringValueStrindex": value.string_value_strindex}
    return {}


def _attributes(values: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kv: KeyValue
    for kv in values:
        out.append({"key": kv.key, "value": _any_value(kv.value)})
    return out


def _resource(resource: Resource) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if resource.attributes:
        out["attributes"] = _attributes(resource.attributes)
    if resource.dropped_attributes_count:
        out["droppedAttributesCount"] = resource.dropped_attributes_count
    return out


def _scope(scope: InstrumentationScope) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if scope.name:
        out["name"] = scope.name
    if scope.version:
        out["version"] = scope.version
    if scope.attributes:
        out["attributes"] = _attributes(scope.attributes)
    if scope.dropped_attributes_count:
        out["droppedAttributesCount"] = scope.dropped_attributes_count
    return out


def _span(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": span.trace_id.hex(), "spanId": span.span_id.hex()}
    if span.trace_state:
        out["traceState"] = span.trace_state
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id.hex()
    if span.flags:
        out["flags"] = span.flags
    out["name"] = span.name
    if span.kind:
        out["kind"] = span.kind
    out["startTimeUnixNano"] = str(span.start_time_unix_nano)
    out["endTimeUnixNano"] = str(span.end_time_unix_nano)
    if span.attributes:
        out["attributes"] = _attributes(span.attributes)
    if span.dropped_attributes_count:
        out["droppedAttributesCount"] = span.dropped_attributes_count
    if span.events:
        events = []
        for event in span.events:
            item: dict[str, Any] = {"timeUnixNano": str(event.time_unix_nano), "name": event.name}
            if event.attributes:
                item["attributes"] = _attributes(event.attributes)
            if event.dropped_attributes_count:
                item["droppedAttributesCount"] = event.dropped_attributes_count
            events.append(item)
        out["events"] = events
    if span.dropped_events_count:
        out["droppedEventsCount"] = span.dropped_events_count
    if span.links:
        links = []
        for link in span.links:
            entry: dict[str, Any] = {"traceId": link.trace_id.hex(), "spanId": link.span_id.hex()}
            if link.trace_state:
                entry["traceState"] = link.trace_state
            if link.attributes:
                entry["attributes"] = _attributes(link.attributes)
            if link.dropped_attributes_count:
                entry["droppedAttributesCount"] = link.dropped_attributes_count
            if link.flags:
                entry["flags"] = link.flags
            links.append(entry)
        out["links"] = links
    if span.dropped_links_count:
        out["droppedLinksCount"] = span.dropped_links_count
    status: dict[str, Any] = {}
    if span.status.message:
        status["message"] = span.status.message
    if span.status.code:
        status["code"] = span.status.code
    out["status"] = status
    return out


def envelope(
    head: str, value: dict[str, Any], key: str, items: list[Any], schema_url: str
) -> dict[str, Any]:
    """One resource or scope entry of an export: ``{head: value, key: items, schemaUrl}``."""
    out: dict[str, Any] = {head: value, key: items}
    if schema_url:
        out["schemaUrl"] = schema_url
    return out


def _scope_spans(scope_spans: ScopeSpans) -> dict[str, Any]:
    spans = [_span(span) for span in scope_spans.spans]
    return envelope("scope", _scope(scope_spans.scope), "spans", spans, scope_spans.schema_url)


def _resource_spans(resource_spans: ResourceSpans) -> dict[str, Any]:
    scopes = [_scope_spans(ss) for ss in resource_spans.scope_spans]
    resource = _resource(resource_spans.resource)
    return envelope("resource", resource, "scopeSpans", scopes, resource_spans.schema_url)


def request_to_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The OTLP/JSON object of a request (the Collector file exporter's layout)."""
    return {"resourceSpans": [_resource_spans(rs) for rs in request.resource_spans]}


def request_to_json_line(request: ExportTraceServiceRequest) -> bytes:
    """One compact UTF-8 line (with the trailing newline) for the OTLP-JSON lines file."""
    line: bytes = orjson.dumps(request_to_otlp_json(request))
    return line + b"\n"
