"""Hostile values end to end: the app exports over OTLP/HTTP to the project's receiver running
as its own process (``groundtrace collect serve`` on 127.0.0.1, stopped by its pid), and the
files it wrote durably are searched for every planted secret."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk._exporters import build_exporter
from tests.collectors.test_receiver_process import ServeProcess
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
