"""Large requests are decoded off the event loop, within a memory budget.

The decode is the receiver's real one (``TRACES.accept``), watched: a wrapper records when a
large body's decode starts and ends and how many run at once, so the tests assert order and
concurrency, never durations.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans, Span

from groundtrace.collectors.errors import InputError
from groundtrace.collectors.receiver import (
    BodyDecodeError,
    Receiver,
    ReceiverLimits,
    _receiver,
    parse_protobuf_request,
    request_to_json_line,
    validate_request,
)
from groundtrace.collectors.receiver._budget import EXPANSION, DecodeBudget
from groundtrace.collectors.receiver._otlp_json import TRACES, Signal
from tests.collectors.receiver.test_receiver_http import PROTO, stored_spans

pytestmark = pytest.mark.timeout(300)

_MIB = 1024 * 1024
#: Bodies at least this large are watched; the small ones are a few hundred bytes.
_LARGE = 64 * 1024


def tiny_spans_body(size: int, tag: int) -> tuple[bytes, int]:
    """A protobuf request of at most ``size`` bytes of tiny spans (ids and a one-letter name,
    33 bytes each: the densest batch, ~508k spans in 16 MiB), and its number of spans."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    trace_id = tag.to_bytes(16, "big")
    count = (size - 64) // 33
    for i in range(count):
        spans.add(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"), name="s")
    body = request.SerializeToString()
    assert len(body) <= size
    return body, count


@dataclass
class _Watch:
    started: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    running: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Watch]:
    seen = _Watch()
    real = TRACES.accept

    class Watched(Signal[Any]):
        def accept(self, body: bytes, *, protobuf: bool) -> tuple[int, bytearray]:
            if len(body) < _LARGE:
                return real(body, protobuf=protobuf)
            with seen.lock:
                seen.running += 1
                seen.most = max(seen.most, seen.running)
            seen.started.set()
            try:
                return real(body, protobuf=protobuf)
            finally:
                with seen.lock:
                    seen.running -= 1
                seen.finished.set()

    watched = Watched(**{f.name: getattr(TRACES, f.name) for f in fields(TRACES)})
    monkeypatch.setattr(_receiver, "TRACES", watched)
    yield seen


def _post(endpoint: str, body: bytes, **headers: str) -> httpx.Response:
    with httpx.Client(timeout=240) as client:
        return client.post(endpoint, content=body, headers={"content-type": PROTO, **headers})


def _post_in_thread(endpoint: str, body: bytes, answers: list[int]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(_post(endpoint, body).status_code))
    thread.start()
    return thread


def test_a_small_request_is_answered_while_a_large_one_is_decoded(
    tmp_path: Path, watch: _Watch
) -> None:
    big, count = tiny_spans_body(4 * _MIB, tag=1)
    small, few = tiny_spans_body(200, tag=2)
    answers: list[int] = []
    with Receiver("127.0.0.1", 0, tmp_path) as rx:
        poster = _post_in_thread(rx.endpoint, big, answers)
        assert watch.started.wait(120), "the large request was never decoded"
        assert _post(rx.endpoint, small).status_code == 200
        # answered before the large body's decode ended (it was decoded on the event loop
        # before, and every other client waited for it)
        assert not watch.finished.is_set()
        poster.join()
    assert answers == [200]
    assert len(stored_spans(tmp_path)) == count + few


def test_large_requests_beyond_the_decode_budget_wait_their_turn(
    tmp_path: Path, watch: _Watch
) -> None:
    bodies = [tiny_spans_body(_MIB, tag=10 + i) for i in range(4)]
    small, few = tiny_spans_body(200, tag=2)
    # room for one large decode at a time, and a small one beside it
    budget = _MIB * EXPANSION[PROTO] + 64 * 1024
    limits = ReceiverLimits(max_decode_bytes=budget)
    answers: list[int] = []
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
        posters = [_post_in_thread(rx.endpoint, body, answers) for body, _ in bodies]
        assert watch.started.wait(120)
        assert _post(rx.endpoint, small).status_code == 200
        for poster in posters:
            poster.join()
    assert answers == [200] * 4  # all admitted, none refused: they waited
    assert watch.most == 1  # four decode threads, but never two large decodes at once
    assert len(stored_spans(tmp_path)) == sum(count for _, count in bodies) + few


def test_the_budget_bounds_decodes_at_the_default_limits(tmp_path: Path, watch: _Watch) -> None:
    """Four 16 MiB requests (each estimated at 96 MiB) in a 128 MiB budget: one at a time."""
    default = ReceiverLimits()
    estimate = default.max_body_bytes * EXPANSION[PROTO]
    assert estimate <= default.max_decode_bytes < 2 * estimate
    # the same proportions, at a sixteenth of the size (a sixteenth of the time)
    limits = ReceiverLimits(max_decode_bytes=default.max_decode_bytes // 16)
    bodies = [tiny_spans_body(_MIB, tag=20 + i) for i in range(4)]
    answers: list[int] = []
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
        posters = [_post_in_thread(rx.endpoint, body, answers) for body, _ in bodies]
        for poster in posters:
            poster.join()
    assert answers == [200] * 4 and watch.most == 1


def test_a_request_estimated_beyond_the_whole_budget_is_decoded_alone(
    tmp_path: Path, watch: _Watch
) -> None:
    body, count = tiny_spans_body(256 * 1024, tag=3)
    limits = ReceiverLimits(max_decode_bytes=1024)
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
        assert _post(rx.endpoint, body).status_code == 200
    assert watch.most == 1 and len(stored_spans(tmp_path)) == count


def test_a_gzip_body_counts_in_flight_once_decompressed(tmp_path: Path) -> None:
    body, count = tiny_spans_body(2 * _MIB, tag=4)
    packed = gzip.compress(body)
    assert len(packed) < _MIB // 2  # small as sent: admitted by its head
    tight = ReceiverLimits(max_inflight_bytes=_MIB)
    with Receiver("127.0.0.1", 0, tmp_path / "tight", limits=tight) as rx:
        answer = _post(rx.endpoint, packed, **{"content-encoding": "gzip"})
        assert answer.status_code == 429
        assert answer.headers["retry-after"] == str(tight.retry_after_seconds)
        small, _ = tiny_spans_body(200, tag=5)
        assert _post(rx.endpoint, gzip.compress(small), **{"content-encoding": "gzip"}).is_success
    roomy = ReceiverLimits(max_inflight_bytes=4 * _MIB)
    with Receiver("127.0.0.1", 0, tmp_path / "roomy", limits=roomy) as rx:
        assert _post(rx.endpoint, packed, **{"content-encoding": "gzip"}).status_code == 200
    assert len(stored_spans(tmp_path / "roomy")) == count


# -- the budget itself ------------------------------------------------------------------------


def test_the_budget_lets_what_fits_pass_a_waiter_and_wakes_it_on_release() -> None:
    async def scenario() -> list[str]:
        budget = DecodeBudget(100)
        order: list[str] = []
        first = await budget.acquire(70)

        async def take(name: str, estimate: int) -> None:
            charge = await budget.acquire(estimate)
            order.append(name)
            await asyncio.sleep(0)
            budget.release(charge)

        large = asyncio.create_task(take("large", 60))
        await asyncio.sleep(0)
        await take("small", 20)  # fits beside the first: passes the waiting large one
        assert not large.done() and budget.used == 70
        budget.release(first)
        await large
        assert budget.used == 0
        return order

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) == ["small", "large"]


def test_the_budget_charges_an_estimate_beyond_it_the_whole_budget() -> None:
    async def scenario() -> tuple[int, bool]:
        budget = DecodeBudget(100)
        small = await budget.acquire(1)
        huge = asyncio.create_task(budget.acquire(10_000))
        await asyncio.sleep(0)
        waited = not huge.done()  # alone: after the small one leaves
        budget.release(small)
        charge = await huge
        budget.release(charge)
        return charge, waited

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) == (100, True)


def test_a_cancelled_waiter_leaves_the_budget_as_it_was() -> None:
    async def scenario() -> tuple[int, int]:
        budget = DecodeBudget(100)
        held = await budget.acquire(100)
        waiter = asyncio.create_task(budget.acquire(50))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        budget.release(held)
        return budget.used, len(budget._waiters)

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) == (0, 0)


# -- decoding a slice at a time ------------------------------------------------------------------


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: its tag byte, its length, its payload."""
    size, length = len(payload), bytearray()
    while True:
        byte, size = size & 0x7F, size >> 7
        length.append(byte | (0x80 if size else 0))
        if not size:
            return bytes([tag]) + bytes(length) + payload


#: Unknown fields of every wire type a request may carry (varint, fixed64, bytes, fixed32).
_UNKNOWN = (b"\xf8\x07\x05", b"\xf9\x0712345678", b"\xfa\x07\x02hi", b"\xfd\x07abcd")


def _shuffled_request(seed: int) -> bytes:
    """A valid request encoded as no exporter would: heads after or between the spans,
    unknown fields at every level, a resource given twice (protobuf merges the two), runs of
    spans longer than a slice."""
    rng = random.Random(seed)
    resources = []
    for r in range(3):
        scopes = []
        for s in range(2):
            fields_ = []
            for i in range((3000, 1, 0)[(r + s) % 3]):  # 6002 spans in all
                span = Span(trace_id=rng.randbytes(16), span_id=rng.randbytes(8), name=f"{i}")
                fields_.append(_field(0x12, span.SerializeToString()))
            head = ScopeSpans(scope=InstrumentationScope(name=f"lib{s}"), schema_url="https://s")
            for extra in (head.SerializeToString(), *_UNKNOWN):
                fields_.insert(rng.randrange(len(fields_) + 1), extra)
            scopes.append(_field(0x12, b"".join(fields_)))
        first = Resource(
            attributes=[KeyValue(key="service.name", value=AnyValue(string_value="a"))]
        )
        second = Resource(attributes=[KeyValue(key="tier", value=AnyValue(int_value=r))])
        for extra in (_field(0x0A, first.SerializeToString()), _UNKNOWN[r],
                      _field(0x0A, second.SerializeToString()), b"\x1a\x03url"):  # fmt: skip
            scopes.insert(rng.randrange(len(scopes) + 1), extra)
        resources.append(_field(0x0A, b"".join(scopes)))
    resources.insert(1, _UNKNOWN[3])
    return b"".join(resources)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_body_decoded_a_slice_at_a_time_gives_the_line_of_the_whole_message(seed: int) -> None:
    body = _shuffled_request(seed)
    whole = parse_protobuf_request(body)
    count, line = TRACES.accept(body, protobuf=True)
    assert count == validate_request(whole) > 2 * 3000
    assert line == request_to_json_line(whole)
    assert b'"service.name"' in line and b'"tier"' in line  # the two resources merged


@pytest.mark.parametrize(
    ("case", "body"),
    [
        ("truncated", _field(0x0A, b"\x12\x05\x12\x03ab")),
        ("length beyond the end", b"\x0a\xff\x7f"),
        ("field number 0", b"\x0a\x02\x02\x00"),
        ("invalid UTF-8 in a span name", _field(0x0A, _field(0x12, _field(0x12, b"\x2a\x01\xff")))),
    ],
)
def test_a_body_that_cannot_be_sliced_is_refused_as_a_whole_parse_refuses_it(
    case: str, body: bytes
) -> None:
    with pytest.raises(BodyDecodeError) as whole:
        parse_protobuf_request(body)
    with pytest.raises(BodyDecodeError) as sliced:
        TRACES.accept(body, protobuf=True)
    assert str(sliced.value) == str(whole.value)


def test_a_body_holding_a_group_is_decoded_whole() -> None:
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s").SerializeToString()
    group = b"\x9b\x01\x08\x01\x9c\x01"  # an unknown field 19 as a (deprecated) group
    body = _field(0x0A, _field(0x12, _field(0x12, span)) + group) + group
    count, line = TRACES.accept(body, protobuf=True)
    assert count == 1 and line == request_to_json_line(parse_protobuf_request(body))


def test_the_first_wrong_id_is_named_with_its_index_across_slices() -> None:
    body, count = tiny_spans_body(512 * 1024, tag=1)  # ~16k spans: several slices
    request = parse_protobuf_request(body)
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[count - 2].span_id = b"\x01" * 7
    spans[count - 1].trace_id = b""
    with pytest.raises(BodyDecodeError, match=rf"spans\[{count - 2}\]: spanId must be 8 bytes"):
        TRACES.accept(request.SerializeToString(), protobuf=True)


@pytest.mark.parametrize("budget", [0, -1])
def test_a_decode_budget_of_nothing_is_refused(tmp_path: Path, budget: int) -> None:
    with pytest.raises(InputError, match="max_decode_bytes must be positive") as caught:
        Receiver("127.0.0.1", 0, tmp_path, limits=ReceiverLimits(max_decode_bytes=budget))
    assert caught.value.field == "max_decode_bytes"
