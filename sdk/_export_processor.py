"""A batch span processor that cannot block or crash the app, and counts every span it loses.

Differences from OpenTelemetry's ``BatchSpanProcessor`` (same ``OTEL_BSP_*`` settings):

* ``on_end`` never blocks: a span arriving at a full queue is dropped and *counted*;
* every span is accounted for in :class:`ExporterStats`: ``exported`` (the exporter reported
  success), ``failed`` (the exporter reported failure or raised), ``dropped`` (never handed to
  the exporter: queue full, processor shut down, or still queued when the shutdown timeout
  ran out), ``queued`` (waiting);
* exports run with OpenTelemetry instrumentation suppressed, so an exporter that itself uses
  an instrumented library (httpx, requests, openai...) cannot produce spans about exporting;
* every text of a span is made UTF-8 encodable before export
  (:func:`~groundtrace.sdk._encodable.encodable_span`): one bad string cannot fail a batch;
* ``shutdown`` is bounded by a timeout; what is left is counted as dropped, not waited for.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from opentelemetry.context import (
    _SUPPRESS_INSTRUMENTATION_KEY,
    Context,
    attach,
    detach,
    set_value,
)
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._encodable import encodable_span
from ._runtime import logger

__all__ = ["CountingBatchSpanProcessor", "ExporterStats"]

_DEFAULT_QUEUE: Final = 2048
_DEFAULT_BATCH: Final = 512
_DEFAULT_DELAY_MS: Final = 5000.0


@dataclass(frozen=True, slots=True)
class ExporterStats:
    """Span counts of one exporter since it was configured.

    Attributes:
        name: the exporter's name (``"otlp_http"``, ``"file"``, a class name...).
        exported: spans the exporter accepted.
        failed: spans in batches the exporter rejected or raised on.
        dropped: spans never handed to the exporter (queue full, after shutdown, or still
            queued when the shutdown timeout expired).
        queued: spans waiting in the queue right now.
    """

    name: str
    exported: int = 0
    failed: int = 0
    dropped: int = 0
    queued: int = 0

    @property
    def lost(self) -> int:
        """Spans that did not reach the backend: ``failed + dropped``."""
        return self.failed + self.dropped


class CountingBatchSpanProcessor(SpanProcessor):
    """Bounded-queue batch processor with exact export accounting.

    Args:
        exporter: the exporter fed by this processor (exclusively).
        name: name reported in :class:`ExporterStats`.
        max_queue_size: spans held at most; more are dropped and counted.
        max_export_batch_size: spans per export call.
        schedule_delay_millis: longest wait before a partial batch is exported.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        name: str,
        max_queue_size: int = _DEFAULT_QUEUE,
        max_export_batch_size: int = _DEFAULT_BATCH,
        schedule_delay_millis: float = _DEFAULT_DELAY_MS,
    ) -> None:
        self.exporter = exporter
        self.name = name
        self._max_queue = max(1, max_queue_size)
        self._batch = max(1, min(max_export_batch_size, self._max_queue))
        self._delay = max(0.0, schedule_delay_millis) / 1000.0
        self._queue: deque[ReadableSpan] = deque()
        self._lock = threading.Lock()  # guards the queue and the counters
        self._export_lock = threading.Lock()  # one export call at a time
        self._wake = threading.Event()
        self._shutdown = False
        self._deadline: float | None = None
        self._exported = 0
        self._failed = 0
        self._dropped = 0
        self._worker = threading.Thread(
            target=self._run, name=f"groundtrace-export-{name}", daemon=True
        )
        self._worker.start()

    # -- SpanProcessor -----------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue a sampled span; drop (and count) it when the queue is full or shut down."""
        context = span.context
        if context is None or not context.trace_flags.sampled:
            return
        with self._lock:
            if self._shutdown or len(self._queue) >= self._max_queue:
                self._dropped += 1
                return
            self._queue.append(span)
            full = len(self._queue) >= self._batch
        if full:
            self._wake.set()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export everything queued now (on the calling thread); True if the queue emptied."""
        deadline = time.monotonic() + max(0, timeout_millis) / 1000.0
        self._drain(deadline)
        try:
            self.exporter.force_flush(timeout_millis)
        except Exception:
            logger.debug("exporter %s force_flush failed", self.name, exc_info=True)
        with self._lock:
            return not self._queue

    def shutdown(self, timeout_millis: int = 5_000) -> None:
        """Stop accepting spans, export what fits in the timeout, count the rest as dropped."""
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
            self._deadline = time.monotonic() + max(0, timeout_millis) / 1000.0
        self._wake.set()
        self._worker.join(max(0, timeout_millis) / 1000.0)
        with self._lock:
            self._dropped += len(self._queue)
            self._queue.clear()
        try:
            self.exporter.shutdown()
        except Exception:
            logger.debug("exporter %s shutdown failed", self.name, exc_info=True)

    # -- accounting --------------------------------------------------------------------------

    def stats(self) -> ExporterStats:
        """A snapshot of this processor's counts."""
        with self._lock:
            return ExporterStats(
                name=self.name,
                exported=self._exported,
                failed=self._failed,
                dropped=self._dropped,
                queued=len(self._queue),
            )

    # -- worker ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            self._wake.wait(self._delay)
            self._wake.clear()
            if self._shutdown:
                self._drain(self._deadline)
                return
            self._drain(None)

    def _take(self) -> list[ReadableSpan]:
        with self._lock:
            count = min(self._batch, len(self._queue))
            return [self._queue.popleft() for _ in range(count)]

    def _drain(self, deadline: float | None) -> None:
        """Export queued batches until the queue is empty or ``deadline`` (monotonic) passes."""
        wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._export_lock.acquire(timeout=wait):
            return
        try:
            while deadline is None or time.monotonic() < deadline:
                batch = self._take()
                if not batch:
                    return
                self._export(batch)
        finally:
            self._export_lock.release()

    def _export(self, batch: Sequence[ReadableSpan]) -> None:
        token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            result = self.exporter.export([encodable_span(span) for span in batch])
        except Exception:
            logger.debug("exporter %s raised", self.name, exc_info=True)
            result = SpanExportResult.FAILURE
        finally:
            detach(token)
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self._exported += len(batch)
            else:
                self._failed += len(batch)
