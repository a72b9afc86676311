"""Exporter outages never change what the app sees; every lost span is counted."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk._config import configure, export_stats, shutdown
from groundtrace.sdk._export_processor import CountingBatchSpanProcessor

pytestmark = pytest.mark.usefixtures("clean_config")


class RaisingExporter(SpanExporter):
    def __init__(self) -> None:
        self.calls = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.calls += 1
        raise ConnectionError("backend down")

    def shutdown(self) -> None:
        raise RuntimeError("shutdown also broken")


class GatedExporter(SpanExporter):
    """Blocks inside export() until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.entered.set()
        self.gate.wait(30)
        self.exported += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.gate.set()


class SuppressionProbe(SpanExporter):
    def __init__(self) -> None:
        self.suppressed: list[bool] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.suppressed.append(_runtime.is_suppressed())
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


@gt.tool
def divide(a: int, b: int) -> float:
    return a / b


@gt.request
def handle(question: str) -> dict[str, object]:
    return {"question": question, "ratio": divide(6, 3)}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_raising_exporter_leaves_results_and_exceptions_untouched(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = RaisingExporter()
    configure(exporter=exporter, capture_content=True)
    for _ in range(5):
        assert handle("q") == {"question": "q", "ratio": 2.0}
    with pytest.raises(ZeroDivisionError) as info:
        divide(1, 0)
    assert info.type is ZeroDivisionError
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        shutdown()
    stats = export_stats()
    assert exporter.calls >= 1
    assert stats.exported == 0
    assert stats.failed == 11  # 5 x (request + tool) + 1 failing tool call
    assert stats.dropped == 0
    assert stats.lost == 11
    assert "lost 11 span(s)" in caplog.text


def test_unreachable_otlp_endpoint_counts_the_loss(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    port = _free_port()  # nothing listens there any more
    configure(exporter="otlp_http", endpoint=f"http://127.0.0.1:{port}", shutdown_timeout=3)
    results = [handle(f"q{i}") for i in range(4)]
    assert results == [{"question": f"q{i}", "ratio": 2.0} for i in range(4)]
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        shutdown()
    stats = export_stats()
    assert stats.exported == 0
    assert stats.failed + stats.dropped == 8
    assert stats.queued == 0
    assert "otlp_http lost 8 span(s)" in caplog.text


def test_full_queue_drops_and_counts_instead_of_blocking() -> None:
    exporter = GatedExporter()
    provider = TracerProvider()
    processor = CountingBatchSpanProcessor(
        exporter, name="gated", max_queue_size=5, max_export_batch_size=5
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("t")
    for i in range(5):
        with tracer.start_as_current_span(f"warm{i}"):
            pass
    assert exporter.entered.wait(30)  # the worker is stuck inside export() with 5 spans
    for i in range(50):
        with tracer.start_as_current_span(f"s{i}"):
            pass  # must not block although the exporter is stuck
    during = processor.stats()
    assert during.queued == 10  # 5 waiting + the 5 the exporter is working on
    assert during.dropped == 45
    assert during.exported + during.failed + during.dropped + during.queued == 55
    exporter.gate.set()
    processor.shutdown(10_000)
    final = processor.stats()
    assert final.exported + final.failed + final.dropped == 55
    assert final.dropped == 45
    assert final.exported == 10
    provider.shutdown()


def test_spans_after_shutdown_are_counted_as_dropped() -> None:
    exporter = SuppressionProbe()
    provider = TracerProvider()
    processor = CountingBatchSpanProcessor(exporter, name="probe")
    provider.add_span_processor(processor)
    processor.shutdown()
    with provider.get_tracer("t").start_as_current_span("late"):
        pass
    assert processor.stats().dropped == 1


def test_exporters_run_with_instrumentation_suppressed() -> None:
    probe = SuppressionProbe()
    configure(exporter=probe)
    handle("q")
    shutdown()
    assert probe.suppressed
    assert all(probe.suppressed)
    assert not _runtime.is_suppressed()  # the app's own context is untouched
