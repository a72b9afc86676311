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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from groundtrace.collectors.spans import (
    AttributeValue,
    BadField,
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
    "objects",
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


def _attributes(raw: Any, where: str, bad: list[BadField]) -> dict[str, AttributeValue]:
    """The readable attributes; each malformed one is dropped and recorded in ``bad``."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        bad.append(BadField(where, "attributes must be a list; all were dropped"))
        return {}
    out: dict[str, AttributeValue] = {}
    for item in raw:
        try:
            value = item.get("value") or {}
            text = value.get("stringValue")  # fast path: most attributes are strings
            out[item["key"]] = text if text is not None else decode_any_value(value)
        except (RecursionError, TypeError, ValueError, KeyError, AttributeError) as exc:
            key = item.get("key") if isinstance(item, dict) else None
            problem = (
                f"attribute {key!r} is nested too deeply"
                if isinstance(exc, RecursionError)
                else f"malformed attribute {key!r}: {json.dumps(item)[:80]}"
            )
            bad.append(BadField(where, f"{problem}; dropped"))
    return out


def _enum(value: Any, names: tuple[str, ...], prefix: str, where: str, bad: list[BadField]) -> str:
    """The enum name (absent is the first); an unknown value is recorded and read as absent."""
    if value is None:
        return names[0]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str):
        name = value.removeprefix(prefix)
        if name in names:
            return name
    bad.append(BadField(where, f"unknown enum value {value!r:.40}; read as {names[0]}"))
    return names[0]


def _nanos(value: Any, where: str, bad: list[BadField]) -> int:
    """A timestamp; a malformed one is dropped (read as absent, ``0``) and recorded."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    bad.append(BadField(where, f"expected an integer timestamp, got {value!r:.40}; dropped"))
    return 0


def _status(raw: Any, where: str, bad: list[BadField]) -> SpanStatus:
    if raw is None:
        return SpanStatus()
    if not isinstance(raw, dict):
        bad.append(BadField(where, "status must be an object; dropped"))
        return SpanStatus()
    code = _enum(raw.get("code"), STATUS_CODES, "STATUS_CODE_", f"{where}.code", bad)
    return SpanStatus(code, str(raw.get("message", "")))


def _events(raw: Any, where: str, bad: list[BadField]) -> list[SpanEvent]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        bad.append(BadField(where, "events must be a list; all were dropped"))
        return []
    events = []
    for i, event in enumerate(raw):
        ewhere = f"{where}[{i}]"
        if not isinstance(event, dict):
            bad.append(BadField(ewhere, "event must be an object; dropped"))
            continue
        events.append(
            SpanEvent(
                str(event.get("name", "")),
                _nanos(event.get("timeUnixNano", 0), f"{ewhere}.timeUnixNano", bad),
                _attributes(event.get("attributes"), f"{ewhere}.attributes", bad),
            )
        )
    return events


def decode_span(
    raw: Any,
    where: str,
    resource: dict[str, AttributeValue],
    scope: tuple[str, str],
    location: SourceLocation,
    resource_bad: tuple[BadField, ...] = (),
) -> SpanRecord:
    """One span object, checked field by field (``where`` is its JSON path).

    Only the ids identify a span: a malformed id rejects it. Any other malformed field
    (an attribute, a timestamp, the kind, the status, an event) is dropped, read as absent
    and listed in the record's ``bad_fields`` (after ``resource_bad``, the dropped fields of
    its resource); the span is kept.

    Raises:
        SpanDecodeError: the span is not an object or its ids are malformed.
    """
    if not isinstance(raw, dict):
        raise SpanDecodeError("span must be an object", where)
    trace_id = decode_id(raw.get("traceId"), 16, f"{where}.traceId")
    span_id = decode_id(raw.get("spanId"), 8, f"{where}.spanId")
    if not trace_id or not span_id:
        raise SpanDecodeError("span has no trace id or span id", where)
    parent = decode_id(raw.get("parentSpanId", ""), 8, f"{where}.parentSpanId")
    bad = list(resource_bad)
    name = raw.get("name", "")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent or None,
        name=name if isinstance(name, str) else str(name),
        start_time_unix_nano=_nanos(
            raw.get("startTimeUnixNano", 0), f"{where}.startTimeUnixNano", bad
        ),
        end_time_unix_nano=_nanos(raw.get("endTimeUnixNano", 0), f"{where}.endTimeUnixNano", bad),
        attributes=_attributes(raw.get("attributes"), f"{where}.attributes", bad),
        status=_status(raw.get("status"), f"{where}.status", bad),
        events=_events(raw.get("events"), f"{where}.events", bad),
        kind=_enum(raw.get("kind"), SPAN_KINDS, "SPAN_KIND_", f"{where}.kind", bad),
        resource=resource,
        scope_name=scope[0],
        scope_version=scope[1],
        location=location,
        bad_fields=tuple(bad),
    )


def _list(obj: Any, key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanDecodeError(f"{key} must be a list", where)
    return value


def objects(parent: dict[str, Any], key: str, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(JSON path, entry) of each entry of the envelope list ``parent[key]``, whose own path is
    ``where`` (``$`` for the request).

    Raises:
        SpanDecodeError: the value is not a list, or an entry is not an object.
    """
    prefix = "" if where == "$" else f"{where}."
    for index, item in enumerate(_list(parent, key, where)):
        path = f"{prefix}{key}[{index}]"
        if not isinstance(item, dict):
            raise SpanDecodeError("must be an object", path)
        yield path, item


def decode_request(
    obj: Any,
    location: SourceLocation,
    errors: list[SpanDecodeError],
    notes: Mapping[str, Sequence[BadField]] | None = None,
) -> list[SpanRecord]:
    """All spans of one ``ExportTraceServiceRequest`` JSON object.

    A span with malformed ids is reported in ``errors`` and skipped; a span with another
    malformed field is kept without it and the field is reported in ``errors`` too (and in
    the span's ``bad_fields``). A malformed envelope raises :class:`SpanDecodeError`.
    ``notes`` are fields repaired before decoding, by the JSON path of the span, scope or
    resource (or ``$``) they belong to: each is reported in ``errors`` once and added to the
    ``bad_fields`` of the spans it belongs to.
    """
    if not isinstance(obj, dict):
        raise SpanDecodeError("expected an ExportTraceServiceRequest object", "$")
    notes = notes or {}
    out: list[SpanRecord] = []
    for rwhere, resource_spans in objects(obj, "resourceSpans", "$"):
        resource_obj = resource_spans.get("resource") or {}
        if not isinstance(resource_obj, dict):
            raise SpanDecodeError("resource must be an object", f"{rwhere}.resource")
        resource_bad: list[BadField] = list(notes.get(rwhere, ()))
        resource = _attributes(
            resource_obj.get("attributes"), f"{rwhere}.resource.attributes", resource_bad
        )
        for swhere, scope_spans in objects(resource_spans, "scopeSpans", rwhere):
            scope_obj = scope_spans.get("scope") or {}
            scope = (
                (str(scope_obj.get("name", "")), str(scope_obj.get("version", "")))
                if isinstance(scope_obj, dict)
                else ("", "")
            )
            scope_bad = notes.get(swhere, ())
            shared = (*resource_bad, *scope_bad)
            for i, raw in enumerate(_list(scope_spans, "spans", swhere)):
                where = f"{swhere}.spans[{i}]"
                try:
                    span = decode_span(raw, where, resource, scope, location, shared)
                except SpanDecodeError as exc:
                    errors.extend(_errors(notes.get(where, ())))
                    errors.append(exc)
                    continue
                repaired = notes.get(where)
                if repaired:
                    span = msgspec.structs.replace(span, bad_fields=(*span.bad_fields, *repaired))
                out.append(span)
                errors.extend(_errors(span.bad_fields[len(shared) :]))
            errors.extend(_errors(scope_bad))
        errors.extend(_errors(resource_bad))
    errors.extend(_errors(notes.get("$", ())))
    return out


def _errors(bad: Iterable[BadField]) -> list[SpanDecodeError]:
    return [SpanDecodeError(b.message, b.field) for b in bad]
