"""Decode one OTLP/JSON ``ExportTraceServiceRequest`` object into :class:`SpanRecord` objects.

Strict about structure, lenient about encoding variants: ids may be hex (OTLP/JSON) or
base64 (the generic protobuf JSON mapping); 64-bit integers may be strings or numbers; enums
may be integers or their names (``SPAN_KIND_SERVER``, ``STATUS_CODE_ERROR``); doubles may be
``"NaN"``/``"Infinity"`` strings.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from groundtrace.collectors.spans import (
    AttributeValue,
    SourceLocation,
    SpanEvent,
    SpanRecord,
    SpanStatus,
)

__all__ = [
    "SpanDecodeError",
    "decode_any_value",
    "decode_id",
    "decode_request",
    "decode_span",
]

SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODES = ("UNSET", "OK", "ERROR")


class SpanDecodeError(ValueError):
    """One span (or the request envelope) is malformed; ``where`` is a JSON path."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.where = where


def decode_id(value: Any, size: int, where: str) -> str:
    """A trace (16 bytes) or span (8 bytes) id as lower-case hex; ``""`` stays empty."""
    if not isinstance(value, str):
        raise SpanDecodeError(f"id must be a string, got {type(value).__name__}", where)
    if not value:
        return ""
    if len(value) == size * 2:
        try:
            bytes.fromhex(value)
        except ValueError:
            pass
        else:
            return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise SpanDecodeError(f"id {value[:40]!r} is neither {size}-byte hex nor base64", where)
    return raw.hex()


def _int(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise SpanDecodeError(f"expected an integer, got {value!r:.40}", where)


def _double(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return float(value)  # "NaN", "Infinity", "-Infinity", or a number as text
    raise TypeError(value)


def _array(value: Any) -> list[Any]:
    values = value.get("values", []) if isinstance(value, dict) else None
    if not isinstance(values, list):
        raise TypeError(value)
    return [decode_any_value(v) for v in values]


def _kvlist(value: Any) -> dict[str, Any]:
    values = value.get("values", []) if isinstance(value, dict) else None
    if not isinstance(values, list):
        raise TypeError(value)
    return {kv["key"]: decode_any_value(kv.get("value")) for kv in values}


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(value)
    return value


def _intvalue(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, int | str):
        return int(value)
    raise TypeError(value)


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "stringValue": _string,
    "intValue": _intvalue,
    "doubleValue": _double,
    "boolValue": _bool,
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "bytesValue": _string,  # kept as its base64 text
}


def decode_any_value(value: Any) -> Any:
    """Decode an OTLP/JSON ``AnyValue`` (``{}`` or ``None`` is ``None``).

    Raises:
        TypeError, ValueError, KeyError: the value is malformed (mapped by the caller).
    """
    if not value:
        return None
    for kind, inner in value.items():
        return _DECODERS[kind](inner)
    return None  # pragma: no cover - unreachable: a non-empty dict has an item


def _attributes(raw: Any, where: str) -> dict[str, AttributeValue]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise SpanDecodeError("attributes must be a list", where)
    out: dict[str, AttributeValue] = {}
    for item in raw:
        try:
            value = item.get("value") or {}
            text = value.get("stringValue")  # fast path: most attributes are strings
            out[item["key"]] = text if text is not None else decode_any_value(value)
        except RecursionError:
            key = item.get("key") if isinstance(item, dict) else None
            raise SpanDecodeError(f"attribute {key!r} is nested too deeply", where) from None
        except (TypeError, ValueError, KeyError, AttributeError):
            key = item.get("key") if isinstance(item, dict) else None
            raise SpanDecodeError(
                f"malformed attribute {key!r}: {json.dumps(item)[:80]}", where
            ) from None
    return out


def _enum(value: Any, names: tuple[str, ...], prefix: str, where: str) -> str:
    if value is None:
        return names[0] if prefix == "SPAN_KIND_" else "UNSET"
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str):
        name = value.removeprefix(prefix)
        if name in names:
            return name
    raise SpanDecodeError(f"unknown enum value {value!r}", where)


def decode_span(
    raw: Any,
    where: str,
    resource: dict[str, AttributeValue],
    scope: tuple[str, str],
    location: SourceLocation,
) -> SpanRecord:
    """One span object, checked field by field (``where`` is its JSON path).

    Raises:
        SpanDecodeError: the span is malformed.
    """
    if not isinstance(raw, dict):
        raise SpanDecodeError("span must be an object", where)
    trace_id = decode_id(raw.get("traceId"), 16, f"{where}.traceId")
    span_id = decode_id(raw.get("spanId"), 8, f"{where}.spanId")
    if not trace_id or not span_id:
        raise SpanDecodeError("span has no trace id or span id", where)
    parent = decode_id(raw.get("parentSpanId", ""), 8, f"{where}.parentSpanId")
    status_raw = raw.get("status") or {}
    if not isinstance(status_raw, dict):
        raise SpanDecodeError("status must be an object", f"{where}.status")
    status = SpanStatus(
        _enum(status_raw.get("code"), STATUS_CODES, "STATUS_CODE_", f"{where}.status.code"),
        str(status_raw.get("message", "")),
    )
    events = []
    for i, event in enumerate(raw.get("events") or ()):
        ewhere = f"{where}.events[{i}]"
        if not isinstance(event, dict):
            raise SpanDecodeError("event must be an object", ewhere)
        events.append(
            SpanEvent(
                str(event.get("name", "")),
                _int(event.get("timeUnixNano", 0), ewhere),
                _attributes(event.get("attributes"), ewhere),
            )
        )
    name = raw.get("name", "")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent or None,
        name=name if isinstance(name, str) else str(name),
        start_time_unix_nano=_int(raw.get("startTimeUnixNano", 0), f"{where}.startTimeUnixNano"),
        end_time_unix_nano=_int(raw.get("endTimeUnixNano", 0), f"{where}.endTimeUnixNano"),
        attributes=_attributes(raw.get("attributes"), f"{where}.attributes"),
        status=status,
        events=events,
        kind=_enum(raw.get("kind"), SPAN_KINDS, "SPAN_KIND_", f"{where}.kind"),
        resource=resource,
        scope_name=scope[0],
        scope_version=scope[1],
        location=location,
    )


def _list(obj: Any, key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanDecodeError(f"{key} must be a list", where)
    return value


def decode_request(
    obj: Any, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[SpanRecord]:
    """All spans of one ``ExportTraceServiceRequest`` JSON object.

    A malformed span is reported in ``errors`` and skipped; the other spans are kept. A
    malformed envelope raises :class:`SpanDecodeError`.
    """
    if not isinstance(obj, dict):
        raise SpanDecodeError("expected an ExportTraceServiceRequest object", "$")
    out: list[SpanRecord] = []
    for r, resource_spans in enumerate(_list(obj, "resourceSpans", "$")):
        rwhere = f"resourceSpans[{r}]"
        if not isinstance(resource_spans, dict):
            raise SpanDecodeError("must be an object", rwhere)
        resource_obj = resource_spans.get("resource") or {}
        if not isinstance(resource_obj, dict):
            raise SpanDecodeError("resource must be an object", f"{rwhere}.resource")
        resource = _attributes(resource_obj.get("attributes"), f"{rwhere}.resource")
        for s, scope_spans in enumerate(_list(resource_spans, "scopeSpans", rwhere)):
            swhere = f"{rwhere}.scopeSpans[{s}]"
            if not isinstance(scope_spans, dict):
                raise SpanDecodeError("must be an object", swhere)
            scope_obj = scope_spans.get("scope") or {}
            scope = (
                (str(scope_obj.get("name", "")), str(scope_obj.get("version", "")))
                if isinstance(scope_obj, dict)
                else ("", "")
            )
            for i, raw in enumerate(_list(scope_spans, "spans", swhere)):
                try:
                    out.append(decode_span(raw, f"{swhere}.spans[{i}]", resource, scope, location))
                except SpanDecodeError as exc:
                    errors.append(exc)
    return out
