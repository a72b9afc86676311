"""Fast path of the OTLP/JSON decoder for the canonical encoding.

Nearly every line a collector or exporter writes uses the canonical OTLP/JSON encoding: hex
ids of the right length, int64s as decimal strings, integer enums, attribute values with a
single ``*Value`` key. :func:`decode_request` decodes that shape in one tight pass (no JSON
paths are formatted, ids repeated within a request are validated once, the common
``UNSET`` status is shared). Whatever departs from it -- base64 ids, enum names, a missing
``value``, a wrong type anywhere -- is handed to the checked decoder of
:mod:`._otlp_json`, which alone decides what is accepted and words every error. The fast
path therefore never changes what is read or reported, only how quickly.
"""

from __future__ import annotations

from typing import Any, Final

from groundtrace.collectors.spans import (
    AttributeValue,
    SourceLocation,
    SpanEvent,
    SpanRecord,
    SpanStatus,
)

from . import _otlp_json as checked
from ._otlp_json import SPAN_KINDS, STATUS_CODES, SpanDecodeError, decode_any_value

__all__ = ["STATUS_BY_CODE", "UNSET_STATUS", "NotCanonical", "canonical_id", "decode_request"]

#: Exceptions that only mean "not the canonical shape": the checked decoder takes over.
_NOT_CANONICAL: Final = (
    TypeError,
    ValueError,
    KeyError,
    AttributeError,
    IndexError,
    RecursionError,
)
_ID_LENGTHS: Final = (32, 16)
#: Statuses without a message are shared (SpanStatus is frozen).
STATUS_BY_CODE: Final = {i: SpanStatus(code, "") for i, code in enumerate(STATUS_CODES)}
UNSET_STATUS: Final = STATUS_BY_CODE[0]


class NotCanonical(Exception):
    """Internal signal: leave this span (or request) to the checked decoder."""


_FALLBACK: Final = (NotCanonical, *_NOT_CANONICAL)


def canonical_id(value: Any, size: int, cache: dict[str, str]) -> str:
    """A canonical hex id (validated once per request); anything else is not canonical."""
    if type(value) is not str or len(value) != size:
        raise NotCanonical
    known = cache.get(value)
    if known is not None:
        return known
    bytes.fromhex(value)  # ValueError: not hex
    known = cache[value] = value.lower()
    return known


def _nanos(value: Any) -> int:
    kind = type(value)
    if kind is str:
        return int(value)  # ValueError: not a number
    if kind is int:
        return value  # type: ignore[no-any-return]
    raise NotCanonical


def _any_value(value: Any) -> Any:
    """An AnyValue; the common scalar and array shapes inline, the rest as the checked path."""
    for kind, inner in value.items():  # the first key decides, as in decode_any_value
        if kind == "stringValue":
            if type(inner) is str:
                return inner
        elif kind == "doubleValue":
            if type(inner) is float:
                return inner
        elif kind == "intValue":
            if type(inner) is str:
                return int(inner)  # ValueError: not canonical
            if type(inner) is int:
                return inner
        elif kind == "boolValue":
            if type(inner) is bool:
                return inner
        elif kind == "arrayValue" and type(inner) is dict:
            values = inner.get("values", [])
            if type(values) is list:
                return [_any_value(v) if v else None for v in values]
        break
    return decode_any_value(value)


def attributes(raw: Any) -> dict[str, AttributeValue]:
    """Attributes of the canonical shape (``[{"key": k, "value": {"xValue": v}}]``)."""
    out: dict[str, AttributeValue] = {}
    if raw is None:
        return out
    if type(raw) is not list:
        raise NotCanonical
    for item in raw:
        value = item["value"]
        text = value.get("stringValue")
        out[item["key"]] = text if text is not None else _any_value(value)
    return out


def _events(raw: Any) -> list[SpanEvent]:
    if not raw:
        return []
    if type(raw) is not list:
        raise NotCanonical
    events = []
    for event in raw:
        name = event.get("name", "")
        events.append(
            SpanEvent(
                name if type(name) is str else str(name),
                _nanos(event.get("timeUnixNano", 0)),
                attributes(event.get("attributes")),
            )
        )
    return events


def _status(raw: Any) -> SpanStatus:
    if not raw:
        return UNSET_STATUS
    if type(raw) is not dict:
        raise NotCanonical
    code = raw.get("code", 0)
    if type(code) is not int or not 0 <= code < len(STATUS_CODES):
        raise NotCanonical
    message = raw.get("message", "")
    if type(message) is not str:
        raise NotCanonical
    return STATUS_BY_CODE[code] if not message else SpanStatus(STATUS_CODES[code], message)


def _span(
    raw: Any,
    resource: dict[str, AttributeValue],
    scope_name: str,
    scope_version: str,
    location: SourceLocation,
    ids: dict[str, str],
) -> SpanRecord:
    if type(raw) is not dict:
        raise NotCanonical
    get = raw.get
    trace_size, span_size = _ID_LENGTHS
    trace_id = canonical_id(get("traceId"), trace_size, ids)
    span_id = canonical_id(get("spanId"), span_size, ids)
    parent = get("parentSpanId", "")
    parent_id = None if parent == "" else canonical_id(parent, span_size, ids)
    kind = get("kind")
    if kind is None:
        kind_name = SPAN_KINDS[0]
    elif type(kind) is int and 0 <= kind < len(SPAN_KINDS):
        kind_name = SPAN_KINDS[kind]
    else:
        raise NotCanonical
    name = get("name", "")
    return SpanRecord(
        trace_id,
        span_id,
        parent_id,
        name if isinstance(name, str) else str(name),
        _nanos(get("startTimeUnixNano", 0)),
        _nanos(get("endTimeUnixNano", 0)),
        attributes(get("attributes")),
        _status(get("status")),
        _events(get("events")),
        kind_name,
        resource,
        scope_name,
        scope_version,
        location,
    )


def _scope(raw: Any) -> tuple[str, str]:
    if not raw:
        return "", ""
    if type(raw) is not dict:
        raise NotCanonical
    name = raw.get("name", "")
    version = raw.get("version", "")
    if type(name) is not str or type(version) is not str:
        raise NotCanonical
    return name, version


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if type(value) is not list:
        raise NotCanonical
    return value


def _fast_request(
    obj: Any, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[SpanRecord]:
    """Canonical envelope; spans that are not canonical go one by one to the checked path."""
    if type(obj) is not dict:
        raise NotCanonical
    out: list[SpanRecord] = []
    append = out.append
    ids: dict[str, str] = {}
    for r, resource_spans in enumerate(_list(obj.get("resourceSpans"))):
        resource_obj = resource_spans.get("resource")
        resource = attributes(resource_obj.get("attributes")) if resource_obj else {}
        for s, scope_spans in enumerate(_list(resource_spans.get("scopeSpans"))):
            scope_name, scope_version = _scope(scope_spans.get("scope"))
            for i, raw in enumerate(_list(scope_spans.get("spans"))):
                try:
                    append(_span(raw, resource, scope_name, scope_version, location, ids))
                    continue
                except _FALLBACK:
                    pass
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                scope = (scope_name, scope_version)
                try:
                    append(checked.decode_span(raw, where, resource, scope, location))
                except SpanDecodeError as exc:
                    errors.append(exc)
    return out


def decode_request(
    obj: Any, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[SpanRecord]:
    """All spans of one ``ExportTraceServiceRequest`` JSON object.

    Same contract as :func:`._otlp_json.decode_request` (which it falls back to whenever
    the envelope is not canonical): a malformed span is reported in ``errors`` and skipped,
    a malformed envelope raises :class:`SpanDecodeError`.
    """
    found: list[SpanDecodeError] = []
    try:
        records = _fast_request(obj, location, found)
    except _FALLBACK:
        return checked.decode_request(obj, location, errors)
    errors.extend(found)
    return records
