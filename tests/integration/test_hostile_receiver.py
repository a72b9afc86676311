"""Hostile values end to end: the app exports over OTLP/HTTP to the project's receiver running
as its own process (``groundtrace collect serve`` on 127.0.0.1, stopped by its pid), and the
files it wrote durably are searched for every planted secret; and hostile HTTP (malformed and
ambiguous heads, nesting bombs, a flood of slow connections) against that process, which answers
each, keeps serving a real exporter and logs no traceback."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk._exporters import build_exporter
from tests.collectors.receiver.test_receiver_decode import tiny_spans_body
from tests.collectors.receiver.test_receiver_process import (
    ServeProcess,
    make_spans,
    span_ids,
    stored_span_ids,
)
from tests.collectors.receiver.test_receiver_protocol import (
    _BAD_HEADS,
    _BOMBS,
    _connect,
    _open_slow,
    _read_until_closed,
    _responses,
)
from tests.sdk.test_hostile_values import SPANS, assert_nothing_leaked, otlp_json_spans, run_app

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

_PROTO = {"content-type": "application/x-protobuf"}


@pytest.fixture(autouse=True)
def _clean_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ``GROUNDTRACE_*`` / ``OTEL_*`` variable; the SDK shut down and reset afterwards."""
    for key in list(os.environ):
        if key.startswith(("GROUNDTRACE_", "OTEL_")):
            monkeypatch.delenv(key)
    yield
    gt.shutdown()
    _runtime.install(_runtime.Settings(), None)


@pytest.mark.parametrize("capture", [True, False], ids=["capture_on", "capture_off"])
def test_the_receiver_stores_every_span_and_no_secret(tmp_path: Path, capture: bool) -> None:
    out = tmp_path / "received"
    server = ServeProcess(out)
    try:
        exporter = build_exporter("otlp_http", endpoint=server.endpoint)
        assert exporter is not None
        assert run_app([exporter], capture) == SPANS
        stats = gt.export_stats()
        assert (stats.failed, stats.dropped, stats.queued) == (0, 0, 0)
        assert server.stop(signal.SIGTERM) == 0
    finally:
        server.kill_if_running()
    raw = b"".join(path.read_bytes() for path in sorted(out.glob("*.jsonl")))
    assert otlp_json_spans(raw) == SPANS
    assert_nothing_leaked(raw, capture, "receiver")


def test_the_receiver_process_answers_hostile_http_and_keeps_serving(tmp_path: Path) -> None:
    out = tmp_path / "received"
    server = ServeProcess(out)
    slow: list[socket.socket] = []
    try:
        for raw in _BAD_HEADS.values():
            with _connect(server.port) as sock:
                sock.sendall(raw)
                answers = _responses(_read_until_closed(sock))
                assert [status for status, _, _ in answers] == [400], answers
        for path, media, bomb in _BOMBS.values():
            with _connect(server.port) as sock:
                head = (
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {media}\r\n"
                    f"Content-Length: {len(bomb)}\r\nConnection: close\r\n\r\n"
                ).encode()
                sock.sendall(head + bomb)
                answers = _responses(_read_until_closed(sock))
                assert [status for status, _, _ in answers] == [400], answers
        slow = _open_slow(server.port, 300, "127.0.0.1")  # heads begun, never finished
        spans = make_spans(5, "beside-the-flood")
        exporter = OTLPSpanExporter(endpoint=server.endpoint, timeout=30)
        try:
            assert exporter.export(spans) is SpanExportResult.SUCCESS  # from the same address
        finally:
            exporter.shutdown()
        assert server.stop(signal.SIGTERM) == 0
        assert server.proc.stderr is not None
        stderr = server.proc.stderr.read()
    finally:
        for sock in slow:
            sock.close()
        server.kill_if_running()
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    lines = []
    while not server.lines.empty():
        lines.append(server.lines.get_nowait())
    assert any("refused {400: 8}" in line for line in lines), lines
    assert stored_span_ids(out, allow_torn_tail=False) == span_ids(encode_spans(spans))


def test_a_16_mib_request_does_not_stall_the_other_clients(tmp_path: Path) -> None:
    """One allowed 16 MiB request of 508k tiny spans, the costliest to decode, while another
    client posts a span every 50 ms: that client is answered throughout. The margin is wide
    on purpose: its slowest answer within a third of the large request's time (the large body
    was decoded on the event loop before, and the small client waited for all of it)."""
    out = tmp_path / "received"
    server = ServeProcess(out)
    big, count = tiny_spans_body(16 * 1024 * 1024, tag=1)
    waits: list[tuple[float, float]] = []  # (start, seconds) of each small post
    stop = threading.Event()

    def small_client() -> None:
        with httpx.Client(timeout=120) as client:
            for i in itertools.count(1):
                if stop.is_set():
                    return
                body, _ = tiny_spans_body(100, tag=1_000 + i)
                started = time.monotonic()
                answer = client.post(server.endpoint, content=body, headers=_PROTO)
                assert answer.status_code == 200
                waits.append((started, time.monotonic() - started))
                time.sleep(0.05)

    watcher = threading.Thread(target=small_client)
    try:
        watcher.start()
        with httpx.Client(timeout=300) as client:
            started = time.monotonic()
            assert client.post(server.endpoint, content=big, headers=_PROTO).status_code == 200
            ended = time.monotonic()
        stop.set()
        watcher.join(timeout=120)
        assert server.stop(signal.SIGTERM) == 0
    finally:
        stop.set()
        server.kill_if_running()
    during = [seconds for start, seconds in waits if start + seconds >= started and start <= ended]
    assert len(during) >= 3, (during, ended - started)
    assert max(during) < (ended - started) / 3, (max(during), ended - started)
    assert _stored_spans(out) == count + len(waits)  # every small post is one span


def _stored_spans(out: Path) -> int:
    return sum(
        len(ss["spans"])
        for path in sorted(out.glob("*.jsonl"))
        for line in path.read_bytes().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
    )
