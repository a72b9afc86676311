"""Fault injection against real local collectors: every ended span is accounted for, exactly,
and flushing or shutting down never waits past its deadline.

Each collector is a small HTTP server on 127.0.0.1 started by the test and stopped by it: it
refuses (nothing listens), answers 500 or 429, accepts and never answers, or accepts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime

_HANG_LIMIT_S = 30.0  # a hanging handler is released by the test long before this


pytestmark = pytest.mark.usefixtures("clean_config")


class _Collector(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.release = threading.Event()
        self.received: list[ExportTraceServiceRequest] = []
        self.bodies: list[bytes] = []  # the raw request bodies

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = self.server.mode
        if mode == "hang":
            self.server.release.wait(_HANG_LIMIT_S)
            self.close_connection = True
            return
        if mode == "ok":
            self.server.received.append(ExportTraceServiceRequest.FromString(body))
            self.server.bodies.append(body)
        status = {"ok": 200, "500": 500, "429": 429}[mode]
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _refusing_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there any more


@contextlib.contextmanager
def _collector(mode: str) -> Iterator[_Collector]:
    """A running collector answering as ``mode``; stopped (and its handlers released) after."""
    server = _Collector(mode)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def _end_spans(count: int) -> None:
    tracer = _runtime.get_tracer()
    for i in range(count):
        with tracer.start_as_current_span(f"s{i}"):
            pass


@pytest.mark.parametrize("mode", ["refuse", "500", "429", "hang"])
def test_every_ended_span_is_exported_dropped_or_failed(
    mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "50")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
    ended = 600
    with contextlib.ExitStack() as stack:
        url = _refusing_url() if mode == "refuse" else stack.enter_context(_collector(mode)).url
        gt.configure(exporter="otlp_http", endpoint=url, max_queue_size=200, shutdown_timeout=1.5)
        _end_spans(ended)
        during = gt.export_stats()
        assert during.exported + during.dropped + during.failed + during.queued == ended
        with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
            gt.shutdown()
    stats = gt.export_stats()
    assert isinstance(stats, gt.ExportStats)
    assert stats.queued == 0
    assert stats.exported == 0
    assert stats.exported + stats.dropped + stats.failed == ended
    assert stats.failed > 0  # batches were taken off the queue, and they are counted
    assert (
        f"otlp_http lost {ended} span(s) of {ended} ended: {stats.dropped} dropped"
        f" (never handed to it: queue full or shut down), {stats.failed} failed"
    ) in caplog.text


def test_force_flush_and_shutdown_keep_their_deadline_against_a_silent_collector() -> None:
    # the exporter's own timeout stays at its 10 s default
    with _collector("hang") as server:
        provider = gt.configure(exporter="otlp_http", endpoint=server.url, shutdown_timeout=1)
        assert isinstance(provider, TracerProvider)
        _end_spans(10)
        started = time.monotonic()
        flushed = provider.force_flush(1000)
        flush_s = time.monotonic() - started
        assert flushed is False  # the collector never answered
        assert flush_s < 5
        started = time.monotonic()
        gt.shutdown()
        shutdown_s = time.monotonic() - started
        assert shutdown_s < 5
    stats = gt.export_stats()
    assert (stats.exported, stats.failed, stats.dropped, stats.queued) == (0, 10, 0, 0)


def test_an_answering_collector_gets_every_span_even_with_a_lone_surrogate() -> None:
    name = os.fsdecode(b"report-\xff.pdf")
    with _collector("ok") as server:
        gt.configure(exporter="otlp_http", endpoint=server.url)
        tracer = _runtime.get_tracer()
        _end_spans(40)
        with tracer.start_as_current_span("open") as span:
            span.set_attribute("path", name)
        gt.shutdown()
        server_spans = [
            span
            for request in server.received
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]
    assert len(server_spans) == 41
    stats = gt.export_stats()
    assert (stats.exported, stats.failed, stats.dropped, stats.queued) == (41, 0, 0, 0)
    (opened,) = [s for s in server_spans if s.name == "open"]
    assert opened.attributes[0].value.string_value == "report-\ufffd.pdf"
