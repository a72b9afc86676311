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
so it is fast); :func:`trace_lines` writes one such line per trace (a damaged line then costs
the spans of one trace only). The spellings the format shares with the collectors' receiver
(doubles, bytes, attributes, scope, resource and the resource/scope entries) come from
:mod:`groundtrace.sdk.otlp_format`; the receiver converts protobuf requests to and from this form
(``groundtrace.collectors.receiver.request_to_otlp_json`` / ``parse_json_request``) and writes
the same line for the same spans.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .otlp_format import (
    bytes_json,
    double_json,
    entry_json,
    put_attributes,
    resource_json,
    scope_json,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext

__all__ = ["dumps_line", "encode_spans_json", "encode_value", "trace_lines"]

#: Span flag bits of the OTLP proto (``SpanFlags``).
_FLAG_HAS_IS_REMOTE: Final = 0x100
_FLAG_IS_REMOTE: Final = 0x200


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
        return {"doubleValue": double_json(value)}  # type: ignore[arg-type]
    if isinstance(value, str):
        return {"stringValue": str(value)}
    if isinstance(value, bool):
        return {"boolValue": bool(value)}
    if isinstance(value, int):
        return {"intValue": str(int(value))}
    if isinstance(value, float):
        return {"doubleValue": double_json(float(value))}
    if isinstance(value, bytes | bytearray):
        return {"bytesValue": bytes_json(bytes(value))}
    if isinstance(value, Mapping):
        items = [{"key": str(k), "value": encode_value(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": items} if items else {}}
    if isinstance(value, Sequence):
        values = [encode_value(v) for v in value]
        return {"arrayValue": {"values": values} if values else {}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, object] | None) -> list[dict[str, Any]]:
    if not attributes:
        return []
    return [{"key": key, "value": encode_value(value)} for key, value in attributes.items()]


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
    put_attributes(out, _attributes(span.attributes), span.dropped_attributes)
    if span.events:
        events = []
        for event in span.events:
            encoded: dict[str, Any] = {"timeUnixNano": str(event.timestamp)}
            if event.name:
                encoded["name"] = event.name
            put_attributes(encoded, _attributes(event.attributes), event.dropped_attributes)
            events.append(encoded)
        out["events"] = events
    if span.dropped_events:
        out["droppedEventsCount"] = span.dropped_events
    if span.links:
        links = []
        for link in span.links:
            encoded = _context(link.context)
            put_attributes(encoded, _attributes(link.attributes), link.dropped_attributes)
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


#: Encoded resources and scopes of one batch, by ``id()`` (each is encoded once per batch,
#: however many lines of that batch repeat it).
_Heads = dict[int, dict[str, Any]]


def _scope_head(scope: InstrumentationScope, heads: _Heads) -> dict[str, Any]:
    head = heads.get(id(scope))
    if head is None:
        head = heads[id(scope)] = scope_json(
            scope.name, scope.version, _attributes(scope.attributes)
        )
    return head


def _resource_head(resource: Resource, heads: _Heads) -> dict[str, Any]:
    head = heads.get(id(resource))
    if head is None:
        head = heads[id(resource)] = resource_json(_attributes(resource.attributes))
    return head


def _request(spans: Iterable[ReadableSpan], heads: _Heads) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` object: ``spans`` grouped by resource, then by
    instrumentation scope, in first-seen order."""
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
        scope_spans = [
            entry_json("scope", {}, "spans", encoded, None)
            if scope is None
            else entry_json("scope", _scope_head(scope, heads), "spans", encoded, scope.schema_url)
            for scope, encoded in by_scope.values()
        ]
        head = _resource_head(resource, heads)
        resource_spans.append(
            entry_json("resource", head, "scopeSpans", scope_spans, resource.schema_url)
        )
    return {"resourceSpans": resource_spans}


def encode_spans_json(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """Encode SDK spans as one OTLP/JSON ``ExportTraceServiceRequest`` object.

    Spans are grouped by resource, then by instrumentation scope, in first-seen order (the
    same grouping as ``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans``).
    """
    return _request(spans, {})


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_line(request: Mapping[str, Any]) -> str:
    """Serialise an OTLP/JSON object as one compact line (no trailing newline)."""
    return _ENCODER.encode(request)


def trace_lines(spans: Iterable[ReadableSpan]) -> bytes:
    """The spans as UTF-8 OTLP/JSON lines, one line per trace, each ending with a newline.

    Traces come in the order their first span comes in ``spans``, and each trace's spans in
    their order there; each line is the :func:`encode_spans_json` line of its trace's spans.
    """
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        context = span.context
        trace_id = context.trace_id if context is not None else 0
        group = by_trace.get(trace_id)
        if group is None:
            by_trace[trace_id] = [span]
        else:
            group.append(span)
    heads: _Heads = {}
    lines = [_ENCODER.encode(_request(group, heads)) for group in by_trace.values()]
    lines.append("")
    return "\n".join(lines).encode("utf-8")
