"""The SDK's file exporter and the receiver write the same OTLP/JSON line for the same spans.

Two writers of the Collector file exporter's format live in the repository: the SDK's
(``OTLPJsonFileExporter``, from SDK spans, no protobuf round trip) and the receiver's (from the
protobuf request an app's OTLP exporter sends). What makes them one format is this contract:
the spans an app exports to a file and the same spans sent to ``groundtrace collect serve``
land on disk as the same bytes. The few places where they knowingly differ are pinned below
(each writer's own bytes are pinned by its own tests, so aligning them is a deliberate change
of stored lines, not a refactoring).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)

from groundtrace.collectors.receiver import _otlp_json
from groundtrace.collectors.receiver._otlp_json import TRACES
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

_T0 = 1_700_000_000_000_000_000
_REMOTE = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1),
                      trace_state=TraceState([("vendor", "v1"), ("other", "o")]))  # fmt: skip


class _Ids(IdGenerator):
    """Fixed trace id, counting span ids: the lines are the same on every run."""

    def __init__(self, first: int = 0x1000) -> None:
        self._span = first

    def generate_span_id(self) -> int:
        self._span += 1
        return self._span

    def generate_trace_id(self) -> int:
        return 0x4BF92F3577B34DA6A3CE929D0E0E4736


def _memory(resource: Resource, first: int = 0x1000) -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    limits = SpanLimits(max_span_attributes=8, max_events=3, max_links=2)
    ids = _Ids(first)
    provider = TracerProvider(resource=resource, id_generator=ids, span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


#: Attribute values of every kind the SDK records, with the doubles JSON has no number for.
_VALUES: tuple[Any, ...] = (
    "plain", "é ✓ \x00\x1f\u2028", 0, -7, 2**63 - 1, True, False, 0.5, -0.0, 1e300,
    float("nan"), float("inf"), float("-inf"), ["a", "b"], [1, 2], [0.25, float("nan")],
    [True, False],
)  # fmt: skip


def _varied_spans() -> list[ReadableSpan]:
    """Spans over two resources and three scopes, with every field the writers spell."""
    spans: list[ReadableSpan] = []
    resources = (
        Resource({"service.name": "shop", "weight": 1.5}, schema_url="https://example.org/r"),
        Resource({}),
    )
    for r, resource in enumerate(resources):
        provider, memory = _memory(resource, first=0x1000 * (r + 1))  # span ids unique
        tracers = (
            provider.get_tracer("lib", "1.0", schema_url="https://example.org/s"),
            provider.get_tracer("bare"),
            provider.get_tracer("scoped", attributes={"tier": "gold", "n": 3}),
        )
        for t, tracer in enumerate(tracers):
            for i, value in enumerate(_VALUES):
                start = _T0 + 1000 * i + t
                links = [Link(_REMOTE, {"why": value}), Link(_REMOTE), Link(_REMOTE)]
                parent = trace.set_span_in_context(NonRecordingSpan(_REMOTE)) if i % 2 else None
                span = tracer.start_span(
                    f"op-{i}", parent, kind=SpanKind(i % 5), start_time=start, links=links
                )
                span.set_attribute("value", value)
                for k in range(i % 10):  # more than the limit: dropped attributes
                    span.set_attribute(f"k{k}", k)
                span.add_event("first", {"value": value}, timestamp=start + 1)
                for e in range(i % 4):
                    span.add_event(f"more-{e}", timestamp=start + 2 + e)
                if i % 3 == 0:
                    span.set_status(Status(StatusCode.ERROR, "boom" if i % 2 else None))
                elif i % 3 == 1:
                    span.set_status(Status(StatusCode.OK))
                span.end(end_time=start + 500)
        spans.extend(memory.get_finished_spans())
    return spans


def _file_line(spans: list[ReadableSpan], path: Path) -> bytes:
    """The line the SDK's file exporter appends for one batch of ``spans``."""
    exporter = OTLPJsonFileExporter(path)
    exporter.export(spans)
    exporter.shutdown()
    data = path.read_bytes()
    path.unlink()
    return data


def _receiver_line(spans: list[ReadableSpan]) -> bytes:
    """The line the receiver stores for the same spans sent as an OTLP/HTTP protobuf body.

    ``encode_spans`` (opentelemetry-exporter-otlp-proto-common) leaves a link's trace state
    out of the request; it is put back here, as an exporter that keeps it sends it, so that
    the receiver's writing of it is compared too.
    """
    request = encode_spans(spans)
    by_id = {span.context.span_id: span for span in spans if span.context is not None}
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for encoded in scope.spans:
                sdk_links = by_id[int.from_bytes(encoded.span_id, "big")].links
                for link, sdk_link in zip(encoded.links, sdk_links, strict=True):
                    link.trace_state = sdk_link.context.trace_state.to_header()
    count, line = TRACES.accept(request.SerializeToString(), protobuf=True)
    assert count == len(spans)
    return line


@pytest.mark.parametrize("batch", ["all", "one", "slice", "every third"])
def test_the_file_exporter_and_the_receiver_write_the_same_line(tmp_path: Path, batch: str) -> None:
    spans = _varied_spans()
    chosen = {"all": spans, "one": spans[:1], "slice": spans[7:40], "every third": spans[::3]}
    line = _file_line(chosen[batch], tmp_path / "t.jsonl")
    by_trace: dict[int, list[ReadableSpan]] = {}  # the file exporter writes a line per trace
    for span in chosen[batch]:
        by_trace.setdefault(span.get_span_context().trace_id, []).append(span)
    assert line.endswith(b"\n") and line.count(b"\n") == len(by_trace)
    assert line == b"".join(_receiver_line(spans) for spans in by_trace.values())


def _span_line(tmp_path: Path, name: str, attributes: dict[str, Any], event: str) -> list[bytes]:
    provider, memory = _memory(Resource({}))
    span = provider.get_tracer("lib").start_span(name, start_time=_T0, attributes=attributes)
    span.add_event(event, timestamp=_T0 + 1)
    span.end(end_time=_T0 + 2)
    spans = list(memory.get_finished_spans())
    return [_file_line(spans, tmp_path / "t.jsonl"), _receiver_line(spans)]


@pytest.mark.parametrize(
    ("case", "sdk_writes", "receiver_writes"),
    [
        ("empty span name", b'"spanId":"0000000000001001","flags":256,"kind"', b',"name":"",'),
        ("empty event name", b'"timeUnixNano":"1700000000000000001"}', b',"name":""}'),
        ("empty list", b'{"arrayValue":{}}', b'{"arrayValue":{"values":[]}}'),
        ("double below 1e-4", b'{"doubleValue":1e-07}', b'{"doubleValue":1e-7}'),
    ],
)
def test_where_the_two_writers_knowingly_differ(
    tmp_path: Path, case: str, sdk_writes: bytes, receiver_writes: bytes
) -> None:
    """Left as they are: both writers' stored bytes are pinned. The SDK leaves an empty name
    and an empty array's ``values`` out, as the protobuf JSON mapping does; the receiver writes
    them. The SDK serialises with ``json`` (``1e-07``), the receiver with ``orjson``
    (``1e-7``); both parse to the same request."""
    name, event = "op", "note"
    attributes: dict[str, Any] = {"v": "x"}
    if case == "empty span name":
        name = ""
    elif case == "empty event name":
        event = ""
    elif case == "empty list":
        attributes = {"v": []}
    else:
        attributes = {"v": 1e-7}
    sdk_line, receiver_line = _span_line(tmp_path, name, attributes, event)
    assert sdk_writes in sdk_line and receiver_writes in receiver_line
    assert sdk_line != receiver_line
    assert TRACES.parse_json(sdk_line) == TRACES.parse_json(receiver_line)


def test_a_batch_longer_than_a_slice_is_written_as_the_file_exporter_writes_it(
    tmp_path: Path,
) -> None:
    """The receiver writes a line a slice of spans at a time (``_ITEMS_PER_SLICE``); the
    slices join into the same bytes, across resources and scopes too."""
    spans: list[ReadableSpan] = []
    for r, resource in enumerate((Resource({"service.name": "a"}), Resource({}))):
        provider, memory = _memory(resource, first=0x10000 * (r + 1))
        for name in ("lib", "other"):
            tracer = provider.get_tracer(name, schema_url=f"https://example.org/{name}")
            for i in range(2 * _otlp_json._ITEMS_PER_SLICE + 1 + r):
                span = tracer.start_span(f"op-{i}", start_time=_T0 + i)
                span.set_attribute("i", i)
                span.end(end_time=_T0 + i + 1)
        spans.extend(memory.get_finished_spans())
    assert _file_line(spans, tmp_path / "t.jsonl") == _receiver_line(spans)
