"""Hostile values end to end: the app exports over OTLP/HTTP to the project's receiver running
as its own process (``groundtrace collect serve`` on 127.0.0.1, stopped by its pid), and the
files it wrote durably are searched for every planted secret; and hostile HTTP (malformed and
ambiguous heads, nesting bombs, a flood of slow connections) against that process, which answers
each, keeps serving a real exporter and logs no traceback."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk._exporters import build_exporter
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
