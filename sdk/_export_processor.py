"""A batch span processor that cannot block or crash the app, and counts every span it loses.

Differences from OpenTelemetry's ``BatchSpanProcessor`` (same ``OTEL_BSP_*`` settings):

* ``on_end`` never blocks: a span arriving at a full queue is dropped and *counted*;
* every sampled span that ended is accounted for in :class:`ExporterStats`, at any moment:
  ``exported`` (the exporter reported success), ``failed`` (handed to the exporter, which
  reported failure, raised, or was still exporting it when the shutdown timeout ran out),
  ``dropped`` (never handed to the exporter: queue full, processor shut down, or still queued
  when the shutdown timeout ran out) and ``queued`` (waiting, or in the batch being exported);
* exports run on the processor's own thread only, with OpenTelemetry instrumentation
  suppressed (an exporter that uses an instrumented library cannot produce spans about
  exporting), after every text of the span was made UTF-8 encodable
  (:func:`~groundtrace.sdk._encodable.encodable_span`: one bad string cannot fail a batch);
* ``force_flush`` and ``shutdown`` wait for the export thread at most their timeout, whatever
  the exporter does (a collector that accepts and never answers cannot hold them longer);
* fork-safe: in a forked child (a prefork server's worker, a ``multiprocessing`` fork child)
  the lock, the queue and the export thread are made anew and the counts start at zero, so
  the child never waits on a lock another thread held at the fork, exports its own spans while
  it lives, and reports its own counts (the spans queued at the fork are the parent's to
  export: :mod:`groundtrace.sdk._fork`). An exporter that holds a connection (OTLP over HTTP or
  gRPC) is rebuilt in the child before its first export when the processor was given a way to
  build it (``rebuild_after_fork``): a connection the parent opened is never shared with it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
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
from ._fork import at_fork_reinit
from ._runtime import logger

__all__ = ["CountingBatchSpanProcessor", "ExporterStats"]

_DEFAULT_QUEUE: Final = 2048
_DEFAULT_BATCH: Final = 512
_DEFAULT_DELAY_MS: Final = 5000.0


@dataclass(frozen=True, slots=True)
class ExporterStats:
    """Span counts of one exporter since it was configured.

    Every sampled span that ended is in exactly one of ``exported``, ``failed``, ``dropped``
    and ``queued``; after shutdown ``queued`` is 0.

    Attributes:
        name: the exporter's name (``"otlp_http"``, ``"file"``, a class name...).
        exported: spans the exporter accepted.
        failed: spans handed to the exporter that it rejected or raised on, or was still
            exporting when the shutdown timeout expired.
        dropped: spans never handed to the exporter (queue full, after shutdown, or still
            queued when the shutdown timeout expired).
        queued: spans waiting in the queue or in the batch being exported right now.
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
        rebuild_after_fork: builds a fresh exporter; called in a forked child before its first
            export, so the child never shares a connection the parent's exporter opened (the
            inherited exporter is then left untouched). None keeps the exporter.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        name: str,
        max_queue_size: int = _DEFAULT_QUEUE,
        max_export_batch_size: int = _DEFAULT_BATCH,
        schedule_delay_millis: float = _DEFAULT_DELAY_MS,
        rebuild_after_fork: Callable[[], SpanExporter | None] | None = None,
    ) -> None:
        self.exporter = exporter
        self.name = name
        self._rebuild = rebuild_after_fork
        self._rebuild_pending = False
        self._inherited: SpanExporter | None = None  # kept alive, never called, in a child
        self._max_queue = max(1, max_queue_size)
        self._batch = max(1, min(max_export_batch_size, self._max_queue))
        self._delay = max(0.0, schedule_delay_millis) / 1000.0
        self._start()
        at_fork_reinit(self._after_fork)

    def _start(self, *, export_thread: bool = True) -> None:
        """Fresh queue, lock, counters and export thread (at creation and in a forked child)."""
        self._queue: deque[ReadableSpan] = deque()
        self._lock = threading.Lock()  # guards the queue, the batch in flight and the counters
        self._idle = threading.Condition(self._lock)  # notified when an export returns
        self._wake = threading.Event()
        self._shutdown = False
        self._deadline: float | None = None
        self._in_flight = 0  # spans of the batch the exporter is working on
        self._exported = 0
        self._failed = 0
        self._dropped = 0
        if export_thread:
            self._worker = threading.Thread(
                target=self._run, name=f"groundtrace-export-{self.name}", daemon=True
            )
            self._worker.start()

    def _after_fork(self) -> None:
        """In a forked child: start anew (without a thread if the parent had shut it down).

        Nothing inherited is trusted: another thread may have held the lock at the fork, and
        the export thread does not exist in the child. The exporter re-initialises itself if
        it needs to (:class:`~groundtrace.sdk.file_exporter.OTLPJsonFileExporter` does).
        """
        stopped = self._shutdown
        self._rebuild_pending = self._rebuild is not None and not stopped
        self._start(export_thread=not stopped)
        self._shutdown = stopped

    def _exporter_of_this_process(self) -> SpanExporter:
        """The exporter, rebuilt first if this is a forked child that has not yet exported."""
        if self._rebuild_pending and self._rebuild is not None:
            self._rebuild_pending = False
            try:
                fresh = self._rebuild()
            except Exception:
                fresh = None
                logger.debug("rebuilding exporter %s after fork failed", self.name, exc_info=True)
            if fresh is not None:
                self._inherited, self.exporter = self.exporter, fresh
        return self.exporter

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
        """Have everything queued exported; True if that finished within ``timeout_millis``.

        The export runs on the processor's thread; this call waits for it at most the timeout
        and never longer, whatever the exporter does.
        """
        deadline = time.monotonic() + max(0, timeout_millis) / 1000.0
        self._wake.set()
        with self._idle:
            done = self._idle.wait_for(
                lambda: not self._queue and not self._in_flight,
                max(0.0, deadline - time.monotonic()),
            )
        if not done:
            return False
        try:
            if self._rebuild_pending:  # nothing was exported through it in this process
                return True
            return self.exporter.force_flush(_millis_left(deadline)) is not False
        except Exception:
            logger.debug("exporter %s force_flush failed", self.name, exc_info=True)
            return False

    def shutdown(self, timeout_millis: int = 5_000) -> None:
        """Stop accepting spans, export what fits in the timeout, count the rest.

        Spans still queued when the timeout expires are counted as dropped; the batch the
        exporter is still working on is counted as failed (a late answer is ignored).
        """
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
            self._deadline = time.monotonic() + max(0, timeout_millis) / 1000.0
        self._wake.set()
        self._worker.join(max(0.0, self._deadline - time.monotonic()))
        with self._lock:
            self._dropped += len(self._queue)
            self._queue.clear()
            self._failed += self._in_flight
            self._in_flight = 0
        try:
            if not self._rebuild_pending:  # the parent's exporter is the parent's to close
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
                queued=len(self._queue) + self._in_flight,
            )

    # -- worker ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            self._wake.wait(self._delay)
            self._wake.clear()
            self._drain()
            if self._shutdown:
                return

    def _take(self) -> list[ReadableSpan]:
        """The next batch (marked in flight), or nothing when done or past the deadline."""
        with self._lock:
            if self._deadline is not None and time.monotonic() >= self._deadline:
                return []
            count = min(self._batch, len(self._queue))
            batch = [self._queue.popleft() for _ in range(count)]
            self._in_flight = count
            return batch

    def _drain(self) -> None:
        """Export queued batches until the queue is empty (or the shutdown deadline passes)."""
        while batch := self._take():
            ok = self._export(batch)
            with self._idle:
                # shutdown() counts a batch still in flight at its deadline as failed and
                # resets _in_flight; an answer arriving after that is not counted twice.
                if self._in_flight:
                    if ok:
                        self._exported += self._in_flight
                    else:
                        self._failed += self._in_flight
                    self._in_flight = 0
                self._idle.notify_all()
        with self._idle:
            self._idle.notify_all()

    def _export(self, batch: list[ReadableSpan]) -> bool:
        token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            exporter = self._exporter_of_this_process()
            result = exporter.export([encodable_span(span) for span in batch])
        except Exception:
            logger.debug("exporter %s raised", self.name, exc_info=True)
            return False
        finally:
            detach(token)
        return result is SpanExportResult.SUCCESS


def _millis_left(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))
