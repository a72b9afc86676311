"""OTLP export requests (traces and logs) between their protobuf and OTLP/JSON encodings.

The receiver stores every batch as one line of OTLP/JSON, exactly as the OpenTelemetry
Collector's ``file`` exporter writes it: an ``ExportTraceServiceRequest`` (or
``ExportLogsServiceRequest``) per line, keys in lowerCamelCase, trace and span ids as
lower-case hex, 64-bit integers as decimal strings, enums as integers, default-valued fields
left out. Protobuf bodies are decoded with the ``opentelemetry-proto`` messages and walked
field by field (much faster than the generic ``json_format`` printer, which would also write
ids in base64). JSON bodies are parsed into the same message first, so both encodings are
validated the same way and land on disk in one canonical form.

Both signals share one layout (resource, then scope, then items) and one walk of it: a
:class:`Signal` names a signal's levels, its ids and how one item is written;
:data:`TRACES` is defined here and ``LOGS`` in :mod:`._otlp_logs`. The spellings of the
format this walk shares with the SDK's file exporter (doubles, bytes, attributes, scope,
resource and the resource/scope entries) come from :mod:`groundtrace.sdk.otlp_format`: the
file exporter and the receiver write the same line for the same spans.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Generic, TypeVar

import orjson
from google.protobuf import json_format, message_factory
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from groundtrace.sdk.otlp_format import (
    bytes_json,
    double_json,
    entry_json,
    put_attributes,
    resource_json,
    scope_json,
)

from . import _wire
from ._wire import Unsliceable

__all__ = [
    "TRACES",
    "BodyDecodeError",
    "IdRule",
    "Signal",
    "any_value_json",
    "attributes_json",
    "load_json",
    "parse_json_request",
    "parse_protobuf_request",
    "request_to_json_line",
    "request_to_otlp_json",
    "validate_request",
]


class BodyDecodeError(ValueError):
    """A request body is not a valid ``ExportTraceServiceRequest`` in the claimed encoding."""


M = TypeVar("M", bound=Message)


@dataclass(frozen=True, slots=True)
class IdRule:
    """One id of a signal's items: its protobuf field, its OTLP/JSON key, its size in bytes
    and whether it may be empty."""

    field: str
    key: str
    size: int
    optional: bool

    def problem(self, size: int) -> str:
        """What is wrong with an id of ``size`` bytes that breaks the rule."""
        empty = "empty or " if self.optional else ""
        return f"{self.key} must be {empty}{self.size} bytes, got {size}"


@dataclass(frozen=True, slots=True)
class Signal(Generic[M]):
    """The layout of one OTLP signal's export request and how to convert it.

    Attributes:
        message: the export request's protobuf class.
        keys: the OTLP/JSON keys of its three levels (``resourceSpans``, ``scopeSpans``,
            ``spans``).
        fields: the protobuf field names of the same levels (also the snake_case JSON
            spelling receivers must accept).
        ids: the ids of one item, checked on every request.
        nested: keys of lists inside an item whose entries carry ids too (span links).
        item_json: one item as its OTLP/JSON object.
    """

    message: type[M]
    keys: tuple[str, str, str]
    fields: tuple[str, str, str]
    ids: tuple[IdRule, ...]
    nested: tuple[str, ...]
    item_json: Callable[[Any], dict[str, Any]]

    def accept(self, body: bytes, *, protobuf: bool) -> tuple[int, bytearray]:
        """Decode and check one request body: its number of items and its OTLP-JSON line
        (empty when it holds no item; a ``bytearray``, so that a line of tens of MiB is
        never copied).

        A protobuf body is decoded a slice of items at a time (:mod:`._wire`), so neither the
        whole decoded message nor one long parse holding the GIL is needed; a body that cannot
        be sliced (groups, or not well-formed) is parsed whole, which names what is wrong.

        Raises:
            BodyDecodeError: the body is not a valid request in its encoding, or an id has
                the wrong size.
        """
        out = bytearray()
        if not protobuf:
            count = self._write(out, self._levels(self.parse_json(body)))
        else:
            try:
                count = self._write(out, self._sliced(body))
            except Unsliceable:
                out.clear()
                count = self._write(out, self._levels(self.parse_protobuf(body)))
        return count, out if count else bytearray()

    def parse_protobuf(self, body: bytes) -> M:
        """Decode a binary protobuf export request.

        Raises:
            BodyDecodeError: the bytes are not a valid message.
        """
        message = self.message()
        try:
            message.ParseFromString(body)
        except (DecodeError, ValueError, RuntimeError) as exc:
            name = message.DESCRIPTOR.name
            raise BodyDecodeError(f"invalid protobuf {name}: {exc}") from exc
        return message

    def parse_json(self, body: bytes) -> M:
        """Decode an OTLP/JSON export request (hex ids; either key spelling).

        Raises:
            BodyDecodeError: not JSON, not an object, a non-hex id, or a field of the wrong
                type.
        """
        document = load_json(body)
        id_keys = (*(rule.key for rule in self.ids), *(rule.field for rule in self.ids))
        spellings = zip(self.keys, self.fields, strict=True)
        outer, middle, inner = (dict.fromkeys(pair) for pair in spellings)
        for r_key in outer:
            for r, resource in enumerate(_as_list(document.get(r_key))):
                for s_key in middle:
                    for s, scope in enumerate(_as_list(resource.get(s_key))):
                        for i_key in inner:
                            where = f"{r_key}[{r}].{s_key}[{s}].{i_key}"
                            _ids_hex_to_b64(scope.get(i_key), where, id_keys, self.nested)
        try:  # ids are base64 now, as the generic protobuf JSON mapping has them
            return json_format.ParseDict(document, self.message(), ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError, TypeError) as exc:
            raise BodyDecodeError(f"invalid OTLP/JSON request: {exc}") from exc

    def validate(self, request: M) -> int:
        """Check the ids of every item and return the number of items.

        Raises:
            BodyDecodeError: an id of the wrong size (the first offending item is named).
        """
        r_field, s_field, i_field = self.fields
        count = 0
        for r, resource in enumerate(getattr(request, r_field)):
            for s, scope in enumerate(getattr(resource, s_field)):
                items = getattr(scope, i_field)
                self._check(items, r, s, 0)
                count += len(items)
        return count

    def _check(self, items: Sequence[Any], r: int, s: int, offset: int) -> None:
        """Check the ids of ``items``, entries ``offset``... of resource ``r``'s scope ``s``."""
        for i, item in enumerate(items, offset):
            for rule in self.ids:
                size = len(getattr(item, rule.field))
                if size != rule.size and (size or not rule.optional):
                    r_key, s_key, i_key = self.keys
                    where = f"{r_key}[{r}].{s_key}[{s}].{i_key}[{i}]"
                    raise BodyDecodeError(f"{where}: {rule.problem(size)}")

    def to_otlp_json(self, request: M) -> dict[str, Any]:
        """The OTLP/JSON object of a request (the Collector file exporter's layout)."""
        document: dict[str, Any] = orjson.loads(self.to_json_line(request))
        return document

    def to_json_line(self, request: M) -> bytes:
        """One compact UTF-8 line (with the trailing newline) for the OTLP-JSON lines file."""
        out = bytearray()
        self._write(out, self._levels(request))
        return bytes(out)

    def _levels(self, request: M) -> _Levels:
        """A decoded request's resources, with their scopes, with their items in slices of
        :data:`_ITEMS_PER_SLICE`."""
        r_field, s_field, i_field = self.fields
        for resource in getattr(request, r_field):
            scopes = getattr(resource, s_field)
            yield resource, ((scope, _slices(getattr(scope, i_field))) for scope in scopes)

    def _sliced(self, body: bytes) -> _Levels:
        """:meth:`_levels` of a protobuf body decoded level by level, the items a run of about
        :data:`_SLICE_BYTES` at a time.

        Raises:
            Unsliceable: the body holds a group or is not well-formed protobuf.
        """
        (r_cls, r_num), (s_cls, s_num), (_, i_num) = _level_types(self.message, self.fields)
        i_field = self.fields[2]
        _parse(self.message, _wire.head(body, 0, len(body), r_num))  # checks the other fields

        def items(start: int, end: int) -> Iterator[Sequence[Any]]:
            for a, b in _wire.runs(body, start, end, i_num, _SLICE_BYTES):
                yield getattr(_parse(s_cls, body[a:b]), i_field)

        def scopes(start: int, end: int) -> Iterator[tuple[Any, Iterable[Sequence[Any]]]]:
            for a, b in _wire.entries(body, start, end, s_num):
                yield _parse(s_cls, _wire.head(body, a, b, i_num)), items(a, b)

        for start, end in _wire.entries(body, 0, len(body), r_num):
            yield _parse(r_cls, _wire.head(body, start, end, s_num)), scopes(start, end)

    def _write(self, out: bytearray, levels: _Levels) -> int:
        """Check the items of ``levels``, append their OTLP-JSON line to ``out`` and return
        their number. Only one slice's JSON objects are alive at a time (a 16 MiB request of
        tiny spans would otherwise hold ~300 MiB of them), and no single ``orjson`` call
        holds the GIL for long.

        Raises:
            BodyDecodeError: an id of the wrong size (the first offending item is named).
        """
        (r_key, s_key, i_key), count = self.keys, 0

        def items(r: int, s: int, slices: Iterable[Sequence[Any]]) -> None:
            nonlocal count
            written = 0
            for part in slices:
                if not part:
                    continue
                self._check(part, r, s, written)
                if written:
                    out.extend(b",")
                out.extend(memoryview(orjson.dumps(list(map(self.item_json, part))))[1:-1])
                written += len(part)
            count += written

        def scopes(r: int, entries: Iterable[tuple[Any, Iterable[Sequence[Any]]]]) -> None:
            for s, (scope, slices) in enumerate(entries):
                head = entry_json("scope", _scope(scope.scope), i_key, [], scope.schema_url)
                _splice(out, head, i_key, partial(items, r, s, slices), first=s == 0)

        def resources() -> None:
            for r, (resource, entries) in enumerate(levels):
                head = _resource(resource.resource)
                entry = entry_json("resource", head, s_key, [], resource.schema_url)
                _splice(out, entry, s_key, partial(scopes, r, entries), first=r == 0)

        _splice(out, {r_key: []}, r_key, resources, first=True)
        out.extend(b"\n")
        return count


#: A request's resources, each with its scopes, each with its items in slices.
_Levels = Iterator[tuple[Any, Iterable[tuple[Any, Iterable[Sequence[Any]]]]]]
#: Items (spans, log records) of a decoded request turned into JSON at once.
_ITEMS_PER_SLICE: Final = 1024
#: Bytes of items of a protobuf body decoded at once (~2,000 tiny spans, ~60 rich ones).
_SLICE_BYTES: Final = 64 * 1024


def _slices(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), _ITEMS_PER_SLICE):
        yield items[start : start + _ITEMS_PER_SLICE]


def _level_types(message: type[Message], names: tuple[str, str, str]) -> list[tuple[Any, int]]:
    """The message class and field number of each level's repeated field (resources, scopes,
    items) below the request ``message``."""
    out: list[tuple[Any, int]] = []
    descriptor: Any = message.DESCRIPTOR
    for name in names:
        field = descriptor.fields_by_name[name]
        descriptor = field.message_type
        out.append((message_factory.GetMessageClass(descriptor), field.number))
    return out


def _parse(cls: Any, data: bytes) -> Any:
    try:
        return cls.FromString(data)
    except (DecodeError, ValueError, RuntimeError):
        raise Unsliceable from None  # parsed whole, the body is refused in protobuf's words


def _splice(
    out: bytearray, entry: dict[str, Any], key: str, write: Callable[[], None], *, first: bool
) -> None:
    """Append ``entry`` (whose list under ``key`` is empty) to ``out``, with what ``write``
    appends as that list's contents; a comma before it unless it is the ``first`` of its list.

    The empty list is found by its key: ``"key":[]`` cannot occur inside a JSON string (a quote
    there is escaped) and the entry has no other key of that name.
    """
    text = orjson.dumps(entry)
    marker = b'"' + key.encode("ascii") + b'":['
    cut = text.index(marker + b"]") + len(marker)
    if not first:
        out.extend(b",")
    out.extend(memoryview(text)[:cut])
    write()
    out.extend(memoryview(text)[cut:])


# ---------------------------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------------------------


def load_json(body: bytes) -> dict[str, Any]:
    """The JSON object of an OTLP/JSON body.

    Raises:
        BodyDecodeError: not JSON, not an object, or nested deeper than the parser's
            recursion limit (a nesting bomb such as 100 000 ``[``); a message nested deeper
            than protobuf's limit of 100 is refused later, by :meth:`Signal.parse_json`.
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


def _hex_to_b64(value: object, where: str) -> object:
    if not isinstance(value, str):
        return value  # json_format reports the wrong type precisely
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise BodyDecodeError(f"{where}: id {value!r} is not hex-encoded") from None
    return base64.b64encode(raw).decode("ascii")


def _ids_hex_to_b64(
    items: object, where: str, id_keys: tuple[str, ...], nested: tuple[str, ...]
) -> None:
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for key in id_keys:
            if key in item:
                item[key] = _hex_to_b64(item[key], f"{where}[{index}].{key}")
        for key in nested:
            _ids_hex_to_b64(item.get(key), f"{where}[{index}].{key}", id_keys, nested)


def _as_list(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


# ---------------------------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------------------------


def any_value_json(value: AnyValue) -> dict[str, Any]:
    """One ``AnyValue`` as its OTLP/JSON object."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return {"stringValue": value.string_value}
    if which == "int_value":
        return {"intValue": str(value.int_value)}
    if which == "bool_value":
        return {"boolValue": value.bool_value}
    if which == "double_value":
        return {"doubleValue": double_json(value.double_value)}
    if which == "array_value":
        return {"arrayValue": {"values": [any_value_json(v) for v in value.array_value.values]}}
    if which == "kvlist_value":
        return {"kvlistValue": {"values": attributes_json(value.kvlist_value.values)}}
    if which == "bytes_value":
        return {"bytesValue": bytes_json(value.bytes_value)}
    if which == "string_value_strindex":
        return {"stringValueStrindex": value.string_value_strindex}
    return {}


def attributes_json(values: Any) -> list[dict[str, Any]]:
    """Repeated ``KeyValue`` (the ``attributes`` of a span, event, link, log record, scope or
    resource) as their OTLP/JSON ``{"key", "value"}`` objects."""
    out: list[dict[str, Any]] = []
    kv: KeyValue
    for kv in values:
        out.append({"key": kv.key, "value": any_value_json(kv.value)})
    return out


def _resource(resource: Resource) -> dict[str, Any]:
    return resource_json(attributes_json(resource.attributes), resource.dropped_attributes_count)


def _scope(scope: InstrumentationScope) -> dict[str, Any]:
    attributes = attributes_json(scope.attributes)
    return scope_json(scope.name, scope.version, attributes, scope.dropped_attributes_count)


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
    put_attributes(out, attributes_json(span.attributes), span.dropped_attributes_count)
    if span.events:
        events = []
        for event in span.events:
            item: dict[str, Any] = {"timeUnixNano": str(event.time_unix_nano), "name": event.name}
            put_attributes(item, attributes_json(event.attributes), event.dropped_attributes_count)
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
            put_attributes(entry, attributes_json(link.attributes), link.dropped_attributes_count)
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


# ---------------------------------------------------------------------------------------------
# traces
# ---------------------------------------------------------------------------------------------

#: Trace exports: every span has a trace id and a span id; a parent span id is optional.
TRACES: Final[Signal[ExportTraceServiceRequest]] = Signal(
    message=ExportTraceServiceRequest,
    keys=("resourceSpans", "scopeSpans", "spans"),
    fields=("resource_spans", "scope_spans", "spans"),
    ids=(
        IdRule("trace_id", "traceId", 16, optional=False),
        IdRule("span_id", "spanId", 8, optional=False),
        IdRule("parent_span_id", "parentSpanId", 8, optional=True),
    ),
    nested=("links",),
    item_json=_span,
)


def parse_protobuf_request(body: bytes) -> ExportTraceServiceRequest:
    """Decode a binary protobuf ``ExportTraceServiceRequest``.

    Raises:
        BodyDecodeError: the bytes are not a valid message.
    """
    return TRACES.parse_protobuf(body)


def parse_json_request(body: bytes) -> ExportTraceServiceRequest:
    """Decode an OTLP/JSON ``ExportTraceServiceRequest`` (hex ids; either key spelling).

    Raises:
        BodyDecodeError: not JSON, not an object, a non-hex id, or a field of the wrong type.
    """
    return TRACES.parse_json(body)


def validate_request(request: ExportTraceServiceRequest) -> int:
    """Check the ids of every span and return the number of spans.

    Raises:
        BodyDecodeError: a trace id is not 16 bytes, a span id not 8, or a parent span id
            neither empty nor 8 bytes (the first offending span is named).
    """
    return TRACES.validate(request)


def request_to_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The OTLP/JSON object of a request (the Collector file exporter's layout)."""
    return TRACES.to_otlp_json(request)


def request_to_json_line(request: ExportTraceServiceRequest) -> bytes:
    """One compact UTF-8 line (with the trailing newline) for the OTLP-JSON lines file."""
    return TRACES.to_json_line(request)
