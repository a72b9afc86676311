"""Decode OTLP protobuf ``ExportTraceServiceRequest`` messages and their file framing.

Accepted framing (documented for users in :mod:`groundtrace.collectors.readers`):

* a stream of varint length-delimited messages (each message preceded by its byte length
  as a base-128 varint, as written by protobuf's ``writeDelimitedTo`` / Java
  ``writeDelimitedTo`` and the OTel Collector file exporter's ``format: proto``);
* a single bare message filling the whole file. A bare message starts with byte ``0x0A``
  (the tag of field 1, ``resource_spans``); a delimited stream whose first frame is 10 bytes
  long cannot hold a span, so a first byte of ``0x0A`` unambiguously means "bare message".
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import IO, Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from groundtrace.collectors.spans import (
    AttributeValue,
    BadField,
    SourceLocation,
    SpanEvent,
    SpanRecord,
    SpanStatus,
)

from ._otlp_json import SPAN_KINDS, STATUS_CODES, SpanDecodeError

__all__ = ["BARE_MESSAGE_FIRST_BYTE", "FrameError", "decode_message", "iter_frames"]

#: First byte of a bare (undelimited) ExportTraceServiceRequest: field 1, wire type 2.
BARE_MESSAGE_FIRST_BYTE = 0x0A
#: Largest frame accepted (a guard against reading garbage lengths into memory).
MAX_FRAME_BYTES = 256 * 1024 * 1024


class FrameError(ValueError):
    """The delimited stream is broken; nothing after it can be framed."""


def _varint(read: Callable[[int], bytes]) -> int | None:
    """Read one varint; ``None`` at a clean end of stream."""
    shift = 0
    result = 0
    for count in range(10):
        byte = read(1)
        if not byte:
            if count == 0:
                return None
            raise FrameError("stream ends inside a length prefix")
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return result
        shift += 7
    raise FrameError("length prefix longer than 10 bytes")


def iter_frames(stream: IO[bytes], first: bytes) -> Iterator[bytes]:
    """Yield the messages of a protobuf trace file, given its already-read first byte.

    Raises:
        FrameError: the framing is broken (the stream cannot be resynchronised).
    """
    if not first:
        return
    if first[0] == BARE_MESSAGE_FIRST_BYTE:
        yield first + stream.read()
        return
    pending: bytes | None = first
    while True:
        if pending is not None:
            length = _varint(_Prefixed(pending, stream).read)
            pending = None
        else:
            length = _varint(stream.read)
        if length is None:
            return
        if length > MAX_FRAME_BYTES:
            raise FrameError(f"frame length {length} exceeds {MAX_FRAME_BYTES} bytes")
        data = stream.read(length)
        if len(data) != length:
            raise FrameError(f"stream ends inside a frame ({len(data)} of {length} bytes)")
        yield data


class _Prefixed:
    """A byte already read, then the stream (just enough of IO for :func:`_varint`)."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def read(self, n: int) -> bytes:
        if self._head:
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._stream.read(n)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind)


def _attributes(items: Any) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    item: KeyValue
    for item in items:
        out[item.key] = _value(item.value)
    return out


def _enum(value: int, names: tuple[str, ...], where: str, bad: list[BadField]) -> str:
    """The enum name; an unknown value (protobuf enums are open) is recorded, read as unset."""
    if 0 <= value < len(names):
        return names[value]
    bad.append(BadField(where, f"unknown enum value {value}; read as {names[0]}"))
    return names[0]


def decode_message(
    data: bytes, location: SourceLocation, errors: list[SpanDecodeError]
) -> list[SpanRecord]:
    """All spans of one serialized message; malformed spans and fields go to ``errors``.

    A span with invalid ids is skipped; an unknown kind or status code is dropped (read as
    unset) and listed in the span's ``bad_fields``.

    Raises:
        SpanDecodeError: the bytes are not a valid ExportTraceServiceRequest.
    """
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise SpanDecodeError(f"invalid protobuf message: {exc}", "$") from None
    out: list[SpanRecord] = []
    for r, resource_spans in enumerate(message.resource_spans):
        resource = _attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = (scope_spans.scope.name, scope_spans.scope.version)
            for i, span in enumerate(scope_spans.spans):
                where = f"resource_spans[{r}].scope_spans[{s}].spans[{i}]"
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    errors.append(SpanDecodeError("span has an invalid trace or span id", where))
                    continue
                if span.parent_span_id and len(span.parent_span_id) != 8:
                    errors.append(SpanDecodeError("span has an invalid parent span id", where))
                    continue
                bad: list[BadField] = []
                kind = _enum(span.kind, SPAN_KINDS, f"{where}.kind", bad)
                code = _enum(span.status.code, STATUS_CODES, f"{where}.status.code", bad)
                out.append(
                    SpanRecord(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex() or None,
                        name=span.name,
                        start_time_unix_nano=span.start_time_unix_nano,
                        end_time_unix_nano=span.end_time_unix_nano,
                        attributes=_attributes(span.attributes),
                        status=SpanStatus(code, span.status.message),
                        events=[
                            SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes))
                            for e in span.events
                        ],
                        kind=kind,
                        resource=resource,
                        scope_name=scope[0],
                        scope_version=scope[1],
                        location=location,
                        bad_fields=tuple(bad),
                    )
                )
                errors.extend(SpanDecodeError(b.message, b.field) for b in bad)
    return out
