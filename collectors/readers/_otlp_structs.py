"""Typed fast path for OTLP/JSON lines: decode bytes straight into span records.

The common line is the canonical OTLP/JSON encoding a Collector or our SDK writes. Parsing it
into Python dicts and then walking them costs two object graphs per span; here ``msgspec``
decodes the line into small typed structs (not tracked by the cyclic garbage collector) and
one pass (:func:`_records`) turns them into :class:`SpanRecord` objects.

The structs accept a strict subset of what the checked decoder accepts: ``null`` where a
value is expected, an unknown ``AnyValue`` kind, ``kvlistValue``/``bytesValue``, an
``AnyValue`` with two kinds, a non-canonical id, enum names, ``"NaN"`` doubles or any other
type surprise make :func:`decode_line` return ``None`` and the caller decodes the line with
the checked decoder (:mod:`._otlp_json`), which alone decides what is accepted and words
every error. What is read is therefore the same on both paths, only faster here.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, Struct, UnsetType

from groundtrace.collectors.spans import (
    AttributeValue,
    SourceLocation,
    SpanEvent,
    SpanRecord,
    SpanStatus,
)

from ._otlp_json import SPAN_KINDS, STATUS_CODES

__all__ = ["decode_line"]


class _Array(Struct, gc=False, forbid_unknown_fields=True):
    values: list[_Value | None] = []


class _Value(Struct, gc=False, forbid_unknown_fields=True):
    """One ``AnyValue``; UNSET marks an absent kind (``null`` is a type error: checked path)."""

    stringValue: str | UnsetType = UNSET
    intValue: str | int | UnsetType = UNSET
    doubleValue: float | UnsetType = UNSET
    boolValue: bool | UnsetType = UNSET
    arrayValue: _Array | UnsetType = UNSET
    kvlistValue: msgspec.Raw | UnsetType = UNSET
    bytesValue: msgspec.Raw | UnsetType = UNSET


class _KeyValue(Struct, gc=False):
    key: str
    value: _Value | None = None


class _Status(Struct, gc=False):
    code: int = 0
    message: str = ""


class _Event(Struct, gc=False):
    name: str = ""
    timeUnixNano: str | int = 0
    attributes: list[_KeyValue] = []


class _Span(Struct, gc=False):
    traceId: str | UnsetType = UNSET
    spanId: str | UnsetType = UNSET
    parentSpanId: str = ""
    name: str = ""
    kind: int | UnsetType = UNSET
    startTimeUnixNano: str | int = 0
    endTimeUnixNano: str | int = 0
    attributes: list[_KeyValue] = []
    events: list[_Event] = []
    status: _Status | None = None


class _Scope(Struct, gc=False):
    name: str = ""
    version: str = ""


class _ScopeSpans(Struct, gc=False):
    scope: _Scope | None = None
    spans: list[_Span] = []


class _Resource(Struct, gc=False):
    attributes: list[_KeyValue] = []


class _ResourceSpans(Struct, gc=False):
    resource: _Resource | None = None
    scopeSpans: list[_ScopeSpans] = []


class _Request(Struct, gc=False):
    resourceSpans: list[_ResourceSpans] = []


class _Fallback(Exception):
    """Internal signal: this line is for the checked decoder."""


_DECODER: Final = msgspec.json.Decoder(_Request)
_TRACE_HEX, _SPAN_HEX = 32, 16
_KINDS: Final = len(SPAN_KINDS)
_CODES: Final = len(STATUS_CODES)
#: Statuses without a message are shared (SpanStatus is frozen).
_STATUS_BY_CODE: Final = tuple(SpanStatus(code, "") for code in STATUS_CODES)
_UNSET_STATUS: Final = _STATUS_BY_CODE[0]
#: Exceptions meaning "not for this path" (the checked decoder re-reads the line and reports).
_NOT_HERE: Final = (msgspec.DecodeError, _Fallback, ValueError, TypeError, RecursionError)


def _canonical_id(value: str | UnsetType, size: int, cache: dict[str, str]) -> str:
    """A canonical hex id (validated once per request); anything else is not for this path."""
    if type(value) is not str or len(value) != size:
        raise _Fallback
    known = cache.get(value)
    if known is not None:
        return known
    bytes.fromhex(value)  # ValueError: not hex
    known = cache[value] = value.lower()
    return known


def _value(value: _Value) -> Any:
    """The Python value of an ``AnyValue``: exactly one kind may be set (none is ``None``)."""
    text, integer, number, flag, array = (
        value.stringValue,
        value.intValue,
        value.doubleValue,
        value.boolValue,
        value.arrayValue,
    )
    if value.kvlistValue is not UNSET or value.bytesValue is not UNSET:
        raise _Fallback
    if integer is not UNSET:
        if text is UNSET and number is UNSET and flag is UNSET and array is UNSET:
            return int(integer)  # ValueError: not a decimal integer
    elif number is not UNSET:
        if text is UNSET and flag is UNSET and array is UNSET:
            return float(number)
    elif text is not UNSET:
        if flag is UNSET and array is UNSET:
            return text
    elif array is not UNSET:
        if flag is UNSET:
            return [None if v is None else _value(v) for v in array.values]
    elif flag is not UNSET:
        return flag
    else:
        return None
    raise _Fallback  # two kinds: key order decides, which only the checked decoder sees


def _attributes(items: list[_KeyValue]) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for item in items:
        value = item.value
        if value is None:
            out[item.key] = None
            continue
        text = value.stringValue  # most attributes are strings; a string value always wins
        out[item.key] = text if text is not UNSET else _value(value)
    return out


def _nanos(value: str | int) -> int:
    return value if type(value) is int else int(value)


def _records(request: _Request, location: SourceLocation) -> list[SpanRecord]:
    out: list[SpanRecord] = []
    append = out.append
    ids: dict[str, str] = {}  # ids repeat within a request: each is validated once
    for resource_spans in request.resourceSpans:
        resource_obj = resource_spans.resource
        resource = _attributes(resource_obj.attributes) if resource_obj is not None else {}
        for scope_spans in resource_spans.scopeSpans:
            scope = scope_spans.scope
            scope_name, scope_version = ("", "") if scope is None else (scope.name, scope.version)
            for span in scope_spans.spans:
                trace_id = _canonical_id(span.traceId, _TRACE_HEX, ids)
                span_id = _canonical_id(span.spanId, _SPAN_HEX, ids)
                parent = span.parentSpanId
                parent_id = None if parent == "" else _canonical_id(parent, _SPAN_HEX, ids)
                kind = span.kind
                if kind is UNSET:
                    kind_name = SPAN_KINDS[0]
                elif 0 <= kind < _KINDS:
                    kind_name = SPAN_KINDS[kind]
                else:
                    raise _Fallback
                status = span.status
                if status is None:
                    status_record = _UNSET_STATUS
                elif not 0 <= status.code < _CODES:
                    raise _Fallback
                elif status.message:
                    status_record = SpanStatus(STATUS_CODES[status.code], status.message)
                else:
                    status_record = _STATUS_BY_CODE[status.code]
                events = (
                    [
                        SpanEvent(e.name, _nanos(e.timeUnixNano), _attributes(e.attributes))
                        for e in span.events
                    ]
                    if span.events
                    else []
                )
                append(
                    SpanRecord(
                        trace_id,
                        span_id,
                        parent_id,
                        span.name,
                        _nanos(span.startTimeUnixNano),
                        _nanos(span.endTimeUnixNano),
                        _attributes(span.attributes),
                        status_record,
                        events,
                        kind_name,
                        resource,
                        scope_name,
                        scope_version,
                        location,
                    )
                )
    return out


def decode_line(line: bytes, location: SourceLocation) -> list[SpanRecord] | None:
    """The spans of one canonical OTLP/JSON line, or ``None``: decode it with the checked path.

    ``None`` covers invalid JSON too: the checked path re-parses the line and reports the
    error in its own words.
    """
    try:
        return _records(_DECODER.decode(line), location)
    except _NOT_HERE:
        return None
