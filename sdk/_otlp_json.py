"""OTLP/JSON encoding of spans, exactly as the OpenTelemetry Collector's file exporter writes it.

One line = one ``ExportTraceServiceRequest`` in the OTLP/JSON encoding of the OTLP
specification:

* lowerCamelCase field names (``resourceSpans``, ``scopeSpans``, ``startTimeUnixNano``...);
* trace and span ids as lowercase hex strings (not base64 as the generic protobuf JSON mapping);
* 64-bit integers (``startTimeUnixNano``, ``intValue``...) as decimal strings;
* enums (``kind``, ``status.code``) as integers;
* attributes as ``{"key": k, "value": {"stringValue" | "intValue" | "doubleValue" |
  "boolValue" | "bytesValue" | "arrayValue" | "kvlistValue": ...}}``;
* default values omitted, except the always-present ``resource``, ``scope`` and ``status``.

:func:`encode_spans_json` builds the JSON object straight from SDK spans (no protobuf round trip,
so it is fast); :func:`request_to_otlp_json` and :func:`otlp_json_to_request` convert between
the protobuf message and this JSON form (used by tests and tooling).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext

__all__ = [
    "dumps_line",
    "encode_spans_json",
    "encode_value",
    "otlp_json_to_request",
    "request_to_otlp_json",
]

#: Span flag bits of the OTLP proto (``SpanFlags``).
_FLAG_HAS_IS_REMOTE: Final = 0x100
_FLAG_IS_REMOTE: Final = 0x200
#: Field names that carry ids (hex in OTLP/JSON, base64 in the generic protobuf JSON mapping).
_ID_FIELDS: Final = ("traceId", "spanId", "parentSpanId")


def encode_value(value: object) -> dict[str, Any]:
    """Encode one attribute value as an OTLP/JSON ``AnyValue`` object."""
    kind = type(value)
    if kind is str:
        return {"stringValue": value}
    if kind is bool:
        return {"boolValue": value}
    if kind is int:
        return {"intValue": str(value)}
    if kind is float:
        return {"doubleValue": _double(value)}  # type: ignore[arg-type]
    if isinstance(value, str):
        return {"stringValue": str(value)}
    if isinstance(value, bool):
        return {"boolValue": bool(value)}
    if isinstance(value, int):
        return {"intValue": str(int(value))}
    if isinstance(value, float):
        return {"doubleValue": _double(float(value))}
    if isinstance(value, bytes | bytearray):
        return {"bytesValue": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        items = [{"key": str(k), "value": encode_value(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": items} if items else {}}
    if isinstance(value, Sequence):
        values = [encode_value(v) for v in value]
        return {"arrayValue": {"values": values} if values else {}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def _double(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _attributes(attributes: Mapping[str, object] | None) -> list[dict[str, Any]]:
    if not attributes:
        return []
    return [{"key": key, "value": encode_value(value)} for key, value in attributes.items()]


def _put_attributes(
    out: dict[str, Any], attributes: Mapping[str, object] | None, dropped: int
) -> None:
    """Add ``attributes`` and their ``droppedAttributesCount`` to ``out`` (when any)."""
    encoded = _attributes(attributes)
    if encoded:
        out["attributes"] = encoded
    if dropped:
        out["droppedAttributesCount"] = dropped


def _context(ctx: SpanContext | None) -> dict[str, Any]:
    """The ``traceId``, ``spanId`` and ``traceState`` of a span or link."""
    if ctx is None:
        return {"traceId": "", "spanId": ""}
    out: dict[str, Any] = {
        "traceId": format(ctx.trace_id, "032x"),
        "spanId": format(ctx.span_id, "016x"),
    }
    if ctx.trace_state:
        out["traceState"] = ",".join(f"{k}={v}" for k, v in ctx.trace_state.items())
    return out


def _flags(context: SpanContext | None) -> int:
    if context is not None and context.is_remote:
        return _FLAG_HAS_IS_REMOTE | _FLAG_IS_REMOTE
    return _FLAG_HAS_IS_REMOTE


def _span(span: ReadableSpan) -> dict[str, Any]:
    out = _context(span.get_span_context())
    parent = span.parent
    if parent is not None:
        out["parentSpanId"] = format(parent.span_id, "016x")
    out["flags"] = _flags(parent)
    if span.name:
        out["name"] = span.name
    out["kind"] = span.kind.value + 1  # SDK INTERNAL=0 ... ; OTLP SPAN_KIND_INTERNAL=1 ...
    out["startTimeUnixNano"] = str(span.start_time or 0)
    out["endTimeUnixNano"] = str(span.end_time or 0)
    _put_attributes(out, span.attributes, span.dropped_attributes)
    if span.events:
        events = []
        for event in span.events:
            encoded: dict[str, Any] = {"timeUnixNano": str(event.timestamp)}
            if event.name:
                encoded["name"] = event.name
            _put_attributes(encoded, event.attributes, event.dropped_attributes)
            events.append(encoded)
        out["events"] = events
    if span.dropped_events:
        out["droppedEventsCount"] = span.dropped_events
    if span.links:
        links = []
        for link in span.links:
            encoded = _context(link.context)
            _put_attributes(encoded, link.attributes, link.dropped_attributes)
            encoded["flags"] = _flags(link.context)
            links.append(encoded)
        out["links"] = links
    if span.dropped_links:
        out["droppedLinksCount"] = span.dropped_links
    status: dict[str, Any] = {}
    if span.status.description:
        status["message"] = span.status.description
    if span.status.status_code.value:
        status["code"] = span.status.status_code.value
    out["status"] = status
    return out


def _resource(resource: Resource) -> dict[str, Any]:
    attributes = _attributes(resource.attributes)
    return {"attributes": attributes} if attributes else {}


def _scope(scope: InstrumentationScope | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if scope is None:
        return out
    if scope.name:
        out["name"] = scope.name
    if scope.version:
        out["version"] = scope.version
    attributes = _attributes(scope.attributes)
    if attributes:
        out["attributes"] = attributes
    return out


def encode_spans_json(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """Encode SDK spans as one OTLP/JSON ``ExportTraceServiceRequest`` object.

    Spans are grouped by resource, then by instrumentation scope, in first-seen order (the
    same grouping as ``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans``).
    """
    resources: dict[int, Resource] = {}
    groups: dict[int, dict[int, tuple[InstrumentationScope | None, list[Any]]]] = {}
    for span in spans:
        resource = span.resource
        scopes = groups.get(id(resource))
        if scopes is None:
            scopes = groups[id(resource)] = {}
            resources[id(resource)] = resource
        scope = span.instrumentation_scope
        bucket = scopes.get(id(scope))
        if bucket is None:
            bucket = scopes[id(scope)] = (scope, [])
        bucket[1].append(_span(span))
    resource_spans = []
    for resource_id, by_scope in groups.items():
        resource = resources[resource_id]
        scope_spans = []
        for scope, encoded in by_scope.values():
            entry: dict[str, Any] = {"scope": _scope(scope), "spans": encoded}
            if scope is not None and scope.schema_url:
                entry["schemaUrl"] = scope.schema_url
            scope_spans.append(entry)
        entry_rs: dict[str, Any] = {"resource": _resource(resource), "scopeSpans": scope_spans}
        if resource.schema_url:
            entry_rs["schemaUrl"] = resource.schema_url
        resource_spans.append(entry_rs)
    return {"resourceSpans": resource_spans}


def dumps_line(request: Mapping[str, Any]) -> str:
    """Serialise an OTLP/JSON object as one compact line (no trailing newline)."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _convert_ids(node: Any, convert: Any) -> None:
    """Rewrite every id field in an OTLP/JSON trace request in place with ``convert``."""
    for resource_spans in node.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                for name in _ID_FIELDS:
                    if span.get(name):
                        span[name] = convert(span[name])
                for link in span.get("links", ()):
                    for name in _ID_FIELDS:
                        if link.get(name):
                            link[name] = convert(link[name])


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def _hex_to_b64(value: str) -> str:
    return base64.b64encode(bytes.fromhex(value)).decode("ascii")


def request_to_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """Convert a protobuf ``ExportTraceServiceRequest`` to its OTLP/JSON object (hex ids)."""
    data: dict[str, Any] = json_format.MessageToDict(request, use_integers_for_enums=True)
    _convert_ids(data, _b64_to_hex)
    return data


def otlp_json_to_request(data: str | bytes | Mapping[str, Any]) -> ExportTraceServiceRequest:
    """Parse one OTLP/JSON line (or its decoded object) into an ``ExportTraceServiceRequest``.

    Raises:
        ValueError: the text is not valid JSON, an id is not hex, or the object does not match
            the OTLP schema (``google.protobuf.json_format.ParseError`` is a ``ValueError``).
    """
    obj: Any = json.loads(data) if isinstance(data, str | bytes) else json.loads(json.dumps(data))
    if not isinstance(obj, dict):
        raise ValueError("an OTLP/JSON trace request must be a JSON object")
    _convert_ids(obj, _hex_to_b64)
    request = ExportTraceServiceRequest()
    json_format.ParseDict(obj, request)
    return request
