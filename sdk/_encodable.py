"""Make every text of a span encodable as UTF-8, so one value can never fail a whole batch.

Python strings may hold lone surrogates (``"\\udc80"``: a file name or an environment value
decoded with ``surrogateescape``, half of a broken pair). Every OTLP encoding (protobuf, JSON
lines) must write UTF-8 and raises on them, which fails the entire batch the span is in. The
export processor passes each span through :func:`encodable_span` before handing it to an
exporter: spans without such a value are passed on unchanged (one ``isascii`` test per
ASCII string, one trial UTF-8 encoding per other string); a span with one is copied with each
surrogate code point replaced by U+FFFD (the Unicode replacement character), its dropped
counts kept.

Covered: the span name, status description, attributes (keys, strings, string sequences), the
names and attributes of events and links, and the resource and instrumentation scope the span
refers to (``service.name`` read from an environment variable may hold a surrogate too). Those
two are shared by many spans: each distinct one is checked once, and its encodable copy reused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, Status
from opentelemetry.util.types import Attributes, AttributeValue

__all__ = ["encodable_span", "encodable_text"]

_T = TypeVar("_T")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_REPLACEMENT: Final = "\ufffd"


def _bad_text(value: object) -> bool:
    if not isinstance(value, str) or value.isascii():
        return False
    try:
        value.encode("utf-8")  # in C: about 3x faster than searching with the pattern
    except UnicodeEncodeError:
        return True
    return False


def _bad_value(value: object) -> bool:
    if isinstance(value, str):
        return _bad_text(value)
    if isinstance(value, tuple | list):
        return any(_bad_text(item) for item in value)
    return False


def encodable_text(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD (itself if it has none)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_REPLACEMENT, text)


def _clean_value(value: AttributeValue) -> AttributeValue:
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, tuple | list) and all(isinstance(item, str) for item in value):
        return tuple(encodable_text(item) for item in value)
    return value


def _bad_attributes(attributes: Mapping[str, object] | None) -> bool:
    if not attributes:
        return False
    return any(_bad_text(key) or _bad_value(value) for key, value in attributes.items())


def _clean_attributes(attributes: Attributes) -> BoundedAttributes:
    cleaned = BoundedAttributes(
        attributes={
            encodable_text(key): _clean_value(value) for key, value in (attributes or {}).items()
        }
    )
    cleaned.dropped = attributes.dropped if isinstance(attributes, BoundedAttributes) else 0
    return cleaned


def _bad_event(event: Event) -> bool:
    return _bad_text(event.name) or _bad_attributes(event.attributes)


def _bad_link(link: Link) -> bool:
    return _bad_attributes(link.attributes)


def _bounded(items: list[_T], dropped: int) -> BoundedList[_T]:
    bounded: BoundedList[_T] = BoundedList(None)
    bounded.extend(items)
    bounded.dropped = dropped
    return bounded


#: ``id(shared object) -> (the object, its encodable form)``: resources and scopes seen.
_SHARED: dict[int, tuple[object, object]] = {}
_SHARED_MAX: Final = 256


def _shared(value: _T, clean: Callable[[_T], _T]) -> _T:
    """``clean(value)``, computed once per distinct ``value`` (a resource or a scope)."""
    seen = _SHARED.get(id(value))
    if seen is not None and seen[0] is value:
        return seen[1]  # type: ignore[return-value]
    result = clean(value)
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[id(value)] = (value, result)
    return result


def _text_or_none(text: str | None) -> str | None:
    return None if text is None else encodable_text(text)


def _clean_resource(resource: Resource) -> Resource:
    if not (_bad_attributes(resource.attributes) or _bad_text(resource.schema_url)):
        return resource
    attributes = {encodable_text(k): _clean_value(v) for k, v in resource.attributes.items()}
    return Resource(attributes, encodable_text(resource.schema_url))


def _clean_scope(scope: InstrumentationScope | None) -> InstrumentationScope | None:
    if scope is None or not (
        _bad_text(scope.name)
        or _bad_text(scope.version)
        or _bad_text(scope.schema_url)
        or _bad_attributes(scope.attributes)
    ):
        return scope
    return InstrumentationScope(
        encodable_text(scope.name),
        _text_or_none(scope.version),
        _text_or_none(scope.schema_url),
        _clean_attributes(scope.attributes),
    )


def encodable_span(span: ReadableSpan) -> ReadableSpan:
    """``span`` itself when all its texts encode as UTF-8, else a copy whose texts do."""
    status = span.status
    resource = _shared(span.resource, _clean_resource)
    scope = _shared(span.instrumentation_scope, _clean_scope)
    if not (
        resource is not span.resource
        or scope is not span.instrumentation_scope
        or _bad_text(span.name)
        or _bad_text(status.description)
        or _bad_attributes(span.attributes)
        or any(_bad_event(event) for event in span.events)
        or any(_bad_link(link) for link in span.links)
    ):
        return span
    events = [
        Event(encodable_text(e.name), _clean_attributes(e.attributes), e.timestamp)
        if _bad_event(e)
        else e
        for e in span.events
    ]
    links = [
        Link(link.context, _clean_attributes(link.attributes)) if _bad_link(link) else link
        for link in span.links
    ]
    description = status.description
    return ReadableSpan(
        name=encodable_text(span.name),
        context=span.context,
        parent=span.parent,
        resource=resource,
        attributes=_clean_attributes(span.attributes),
        events=_bounded(events, span.dropped_events),
        links=_bounded(links, span.dropped_links),
        kind=span.kind,
        status=Status(status.status_code, encodable_text(description) if description else None),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=scope,
    )
