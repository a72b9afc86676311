"""The receiver at the edges of HTTP/1.1 and of its body formats, over raw loopback sockets:
malformed heads, ambiguous framing, nesting bombs, and connection caps that shed slow
connections instead of locking their address out."""

from __future__ import annotations

import logging
import select
import socket
import time
from pathlib import Path

import h11
import pytest

from groundtrace.collectors.receiver import LOGS_PATH, TRACES_PATH, Receiver, ReceiverLimits
from tests.collectors.receiver.test_receiver_http import (
    JSON,
    PROTO,
    _raw_headers,
    _read_response,
    make_spans,
    proto_body,
    stored_lines,
)

_JSON_HEAD = b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the receiver sends until it closes the connection (bounded by the socket
    timeout: a connection the receiver keeps open fails the test with ``TimeoutError``)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def _responses(data: bytes) -> list[tuple[int, dict[bytes, bytes], bytes]]:
    """The responses in ``data`` (status, headers, body), parsed by h11 as a client would."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    if data:  # (no data at all: no response, not an end of stream to complain about)
        client.receive_data(data)
    out: list[tuple[int, dict[bytes, bytes], bytes]] = []
    for _ in range(16):  # bounded: a handful of responses at most
        event = client.next_event()
        if isinstance(event, h11.InformationalResponse):
            continue
        if not isinstance(event, h11.Response):
            break
        body = b""
        while isinstance(part := client.next_event(), h11.Data):
            body += part.data
        out.append((event.status_code, dict(event.headers), body))
        if client.our_state is not h11.DONE or client.their_state is not h11.DONE:
            break
        client.start_next_cycle()
        client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
        client.send(h11.EndOfMessage())
    return out


def _post_once(sock: socket.socket, port: int, body: bytes) -> int:
    """Send one whole protobuf request on ``sock`` and return the status of its answer."""
    sock.sendall(_raw_headers(port, len(body)) + body)
    head = _read_response(sock)
    return int(head.split(b" ", 2)[1])


# -- malformed heads and ambiguous framing ----------------------------------------------------

_BAD_HEADS = {
    "two_content_lengths": _JSON_HEAD + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "negative_content_length": _JSON_HEAD + b"Content-Length: -1\r\n\r\n",
    "exponent_content_length": _JSON_HEAD + b"Content-Length: 1e3\r\n\r\n",
    "not_a_request_line": b"HELLO WORLD\r\n\r\n",
    # A proxy framing by Content-Length would see one request, the receiver (chunked) two:
    "content_length_and_chunked": _JSON_HEAD
    + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    + b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    + b"Content-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("raw", list(_BAD_HEADS.values()), ids=list(_BAD_HEADS))
def test_a_malformed_or_ambiguous_head_gets_400_with_a_reason_and_the_connection_closes(
    tmp_path: Path, raw: bytes
) -> None:
    with Receiver("127.0.0.1", 0, tmp_path) as rx, _connect(rx.port) as sock:
        sock.sendall(raw)
        answers = _responses(_read_until_closed(sock))
        assert len(answers) == 1, answers  # one answer, then the receiver closed
        status, headers, body = answers[0]
        assert status == 400
        assert headers[b"connection"] == b"close"
        assert body.startswith(b"bad HTTP request: ") and len(body) < 300
        assert rx.stats.by_status == {400: 1}
    assert stored_lines(tmp_path) == []  # nothing smuggled through


# -- nesting bombs ----------------------------------------------------------------------------


def _protobuf_any_value_bomb(depth: int) -> bytes:
    """An ExportTraceServiceRequest whose one span attribute nests ``depth`` AnyValue arrays."""

    def tag_len(field_number: int, size: int) -> bytes:
        out = bytearray([field_number << 3 | 2])
        while True:
            low, size = size & 0x7F, size >> 7
            out.append(low | 0x80 if size else low)
            if not size:
                return bytes(out)

    inner = tag_len(1, 1) + b"x"  # AnyValue.string_value
    prefixes: list[bytes] = []
    size = len(inner)
    for _ in range(depth):  # AnyValue.array_value (5) -> ArrayValue.values (1): built in O(n)
        values = tag_len(1, size)
        array = tag_len(5, len(values) + size)
        prefixes.append(array + values)
        size += len(values) + len(array)
    value = b"".join(reversed(prefixes)) + inner
    key_value = tag_len(1, 1) + b"k" + tag_len(2, len(value)) + value
    span = (
        (tag_len(1, 16) + b"\x01" * 16 + tag_len(2, 8) + b"\x02" * 8 + tag_len(5, 1) + b"s")
        + tag_len(9, len(key_value))
        + key_value
    )
    scope_spans = tag_len(2, len(span)) + span
    resource_spans = tag_len(2, len(scope_spans)) + scope_spans
    return tag_len(1, len(resource_spans)) + resource_spans


_BOMBS = {
    "json_traces": (TRACES_PATH, JSON, b"[" * 100_000),
    "json_logs": (LOGS_PATH, JSON, b'{"a":' * 100_000),
    "protobuf_traces": (TRACES_PATH, PROTO, _protobuf_any_value_bomb(100_000)),
}


@pytest.mark.parametrize(("path", "media", "bomb"), list(_BOMBS.values()), ids=list(_BOMBS))
def test_a_nesting_bomb_gets_400_without_a_traceback_and_the_connection_serves_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str, media: str, bomb: bytes
) -> None:
    caplog.set_level(logging.DEBUG)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {media}\r\n"
        f"Content-Length: {len(bomb)}\r\n\r\n"
    ).encode()
    with Receiver("127.0.0.1", 0, tmp_path) as rx, _connect(rx.port) as sock:
        sock.sendall(head + bomb)
        first = _read_response(sock)
        assert first.startswith(b"HTTP/1.1 400"), first
        length = int(first.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        reason = first.split(b"\r\n\r\n", 1)[1]
        while len(reason) < length:  # bounded: the socket times out
            reason += sock.recv(65536)
        assert b"nested too deeply" in reason or b"Error parsing message" in reason, reason
        assert _post_once(sock, rx.port, proto_body(make_spans(1))) == 200  # same connection
        assert rx.stats.by_status == {400: 1, 200: 1}
    _assert_quiet(caplog)


def _assert_quiet(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing logged at warning level or above, and no traceback (the receiver's thread
    included: its asyncio loop reports unhandled connection errors through logging)."""
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert noisy == [], [r.getMessage() for r in noisy]


# -- connection caps: shed the longest-waiting connection, keep serving fresh clients ---------


def _open_slow(port: int, count: int, source: str) -> list[socket.socket]:
    """``count`` connections from ``source`` that each start a head and never finish it."""
    socks: list[socket.socket] = []
    for _ in range(count):  # bounded
        sock = _connect(port, source)
        socks.append(sock)
        sock.sendall(b"P")
    return socks


def _wait_for(predicate: object, rounds: int = 200) -> None:
    assert callable(predicate)
    for _ in range(rounds):  # bounded: until the receiver has seen every connection
        if predicate():
            return
        time.sleep(0.05)


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.timeout(120)
def test_many_slow_connections_from_one_address_do_not_lock_out_a_client_on_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    limits = ReceiverLimits(head_timeout_seconds=60, idle_timeout_seconds=60)
    body = proto_body(make_spans(1))
    socks: list[socket.socket] = []
    try:
        with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
            socks = _open_slow(rx.port, 300, "127.0.0.1")
            held = limits.max_connections_per_client
            _wait_for(lambda: rx.stats.shed_connections >= 300 - held)
            assert rx.stats.shed_connections == 300 - held
            assert rx.stats.refused_connections == 0
            assert _closed_by_peer(socks[0])  # the longest waiting went first
            # a well-behaved client on the same address, and one on another, get their 200
            with _connect(rx.port, "127.0.0.1") as sock:
                assert _post_once(sock, rx.port, body) == 200
            with _connect(rx.port, "127.0.0.2") as sock:
                assert _post_once(sock, rx.port, body) == 200
            assert rx.stats.by_status == {200: 2}
            assert rx.stats.shed_connections == 300 - held + 1
        # the stop closed the connections still in their heads without a word
        assert rx.stats.by_status == {200: 2}
    finally:
        for sock in socks:
            sock.close()
    _assert_quiet(caplog)


@pytest.mark.timeout(120)
def test_at_the_total_cap_a_fresh_client_sheds_the_longest_waiting_connection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    limits = ReceiverLimits(max_connections=8, head_timeout_seconds=60, idle_timeout_seconds=60)
    socks: list[socket.socket] = []
    try:
        with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
            socks = _open_slow(rx.port, 20, "127.0.0.2")
            _wait_for(lambda: rx.stats.shed_connections >= 12)
            assert rx.stats.shed_connections == 12
            with _connect(rx.port, "127.0.0.3") as sock:
                assert _post_once(sock, rx.port, proto_body(make_spans(1))) == 200
            assert rx.stats.shed_connections == 13
            assert rx.stats.by_status == {200: 1}  # no 503: a waiting connection gave way
    finally:
        for sock in socks:
            sock.close()
    _assert_quiet(caplog)


def test_busy_connections_are_never_shed(tmp_path: Path) -> None:
    """Beyond connections that are all busy with a request, a newcomer is refused instead:
    503 at the total cap, closed at once at its address's cap."""
    limits = ReceiverLimits(max_connections=3, max_connections_per_client=2)
    head = _raw_headers(0, 10).replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
    busy: list[socket.socket] = []
    try:
        with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
            for source in ("127.0.0.2", "127.0.0.2", "127.0.0.3"):
                sock = _connect(rx.port, source)
                busy.append(sock)
                sock.sendall(head)  # the head, then the body withheld
                assert _read_response(sock).startswith(b"HTTP/1.1 100")  # now busy
            with _connect(rx.port, "127.0.0.2") as sock:  # its address's share is all busy
                assert _closed_by_peer(sock)
            assert rx.stats.refused_connections == 1
            with _connect(rx.port, "127.0.0.3") as sock:  # every connection is busy
                assert _post_once(sock, rx.port, proto_body(make_spans(1))) == 503
            assert rx.stats.shed_connections == 0
            for sock in busy:  # the held requests finish normally
                sock.sendall(b"\x00" * 10)
                assert _read_response(sock).startswith(b"HTTP/1.1 400")  # not a message
    finally:
        for sock in busy:
            sock.close()


# -- body deadline: a trickled body cannot hold its in-flight slot or connection forever -------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("path", "status"), [(TRACES_PATH, 408), ("/elsewhere", 404)])
def test_a_trickled_body_is_cut_off_at_the_body_deadline_and_frees_its_slot(
    tmp_path: Path, path: str, status: int
) -> None:
    """Read for the export (408) or only to be dropped after a refusal (404): either way the
    answer comes at the deadline with ``Connection: close``, long before the body is whole."""
    limits = ReceiverLimits(
        max_inflight_requests=1, body_timeout_seconds=0.5, read_timeout_seconds=30
    )
    body = proto_body(make_spans(1))
    head = _raw_headers(0, len(body)).replace(b"/v1/traces", path.encode(), 1)
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx, _connect(rx.port) as slow:
        slow.sendall(head)
        answered = False
        for byte in body[:100]:  # bounded: 100 bytes, one every 50 ms; never the whole body
            slow.sendall(bytes([byte]))
            if select.select([slow], [], [], 0.05)[0]:
                answered = True
                break
        assert answered, "no answer while the body trickled in"
        answers = _responses(_read_until_closed(slow))
        assert [(s, h.get(b"connection")) for s, h, _ in answers] == [(status, b"close")]
        with _connect(rx.port) as sock:  # the in-flight slot is free again
            assert _post_once(sock, rx.port, body) == 200
        assert rx.stats.by_status == {status: 1, 200: 1}
