"""OTLP-JSON-lines file exporter: the OpenTelemetry Collector file-exporter format.

Each export call (one batch) becomes one line holding one ``ExportTraceServiceRequest`` in the
OTLP/JSON encoding (hex ids, integer enums, 64-bit integers as strings; see
:mod:`groundtrace.sdk._otlp_json`). Files written here can be read by the groundtrace
collectors, by the Collector's ``otlpjsonfile`` receiver and by anything that reads the
Collector's ``file`` exporter output.

Usage::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

    provider = TracerProvider()
    provider.add_span_processor(
        BatchSpanProcessor(OTLPJsonFileExporter("traces/", max_bytes=50_000_000, backup_count=3))
    )

Paths: a path that is an existing directory or ends with a path separator names a directory;
the file is then ``DIR/traces-<pid>.jsonl`` (one file per process, so several workers never
interleave lines). Any other path is the file itself; parent directories are created.

Rotation (``max_bytes > 0``): before a line would make the file exceed ``max_bytes``, the file is
rotated like :class:`logging.handlers.RotatingFileHandler`, keeping the ``.jsonl`` suffix:
``traces.jsonl`` -> ``traces.1.jsonl`` -> ``traces.2.jsonl`` ... up to ``backup_count`` files; the
oldest is deleted. ``backup_count=0`` deletes the full file instead. A single line larger than
``max_bytes`` is still written whole (lines are never split).

Durability: every export is flushed to the operating system; :meth:`force_flush` and
:meth:`shutdown` also ``fsync`` the file so nothing is lost on a clean exit.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Final

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._otlp_json import dumps_line, encode_spans_json

__all__ = ["OTLPJsonFileExporter", "resolve_trace_path", "rotated_name"]

_logger: Final = logging.getLogger("groundtrace.sdk")


def resolve_trace_path(path: str | os.PathLike[str]) -> Path:
    """The file written for ``path``: the path itself, or ``DIR/traces-<pid>.jsonl`` for a dir."""
    text = os.fspath(path)
    candidate = Path(text)
    if candidate.is_dir() or text.endswith((os.sep, "/")):
        return candidate / f"traces-{os.getpid()}.jsonl"
    return candidate


def rotated_name(path: Path, index: int) -> Path:
    """Name of the ``index``-th rotated file: ``traces.jsonl`` -> ``traces.<index>.jsonl``."""
    return path.with_name(f"{path.stem}.{index}{path.suffix}")


class OTLPJsonFileExporter(SpanExporter):
    """Write span batches as OTLP/JSON lines (Collector file-exporter format).

    Thread-safe: batches from several processors or threads are written as whole lines. Never
    raises into the caller: write errors are logged at debug level and reported as
    ``SpanExportResult.FAILURE`` (so the span processor counts them as failed).

    Args:
        path: a file path, or a directory (then ``DIR/traces-<pid>.jsonl``).
        max_bytes: rotate before the file would exceed this size; 0 disables rotation.
        backup_count: number of rotated files kept (``traces.1.jsonl`` is the newest).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "groundtrace-traces/",
        *,
        max_bytes: int = 0,
        backup_count: int = 5,
    ) -> None:
        self._path = resolve_trace_path(path)
        self._max_bytes = max(0, int(max_bytes))
        self._backup_count = max(0, int(backup_count))
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._size = 0
        self._closed = False

    @property
    def path(self) -> Path:
        """The file currently written."""
        return self._path

    def _open(self) -> IO[bytes]:
        if self._file is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self._path, "ab")  # noqa: SIM115 -- kept open across exports
            self._size = self._file.tell()
        return self._file

    def _rotate(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
        if self._backup_count > 0:
            for index in range(self._backup_count - 1, 0, -1):
                source = rotated_name(self._path, index)
                if source.exists():
                    os.replace(source, rotated_name(self._path, index + 1))
            if self._path.exists():
                os.replace(self._path, rotated_name(self._path, 1))
        elif self._path.exists():
            self._path.unlink()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append one line with all ``spans``."""
        if self._closed:
            return SpanExportResult.FAILURE
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            data = (dumps_line(encode_spans_json(spans)) + "\n").encode("utf-8")
            with self._lock:
                handle = self._open()
                if self._max_bytes and self._size > 0 and self._size + len(data) > self._max_bytes:
                    self._rotate()
                    handle = self._open()
                handle.write(data)
                handle.flush()
                self._size += len(data)
        except Exception:
            _logger.debug("OTLP-JSON file export to %s failed", self._path, exc_info=True)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Flush and fsync the current file."""
        try:
            with self._lock:
                if self._file is not None:
                    self._file.flush()
                    os.fsync(self._file.fileno())
        except Exception:
            _logger.debug("flushing %s failed", self._path, exc_info=True)
            return False
        return True

    def shutdown(self) -> None:
        """Flush, fsync and close the file; later exports fail (and are counted as failed)."""
        try:
            with self._lock:
                self._closed = True
                if self._file is not None:
                    self._file.flush()
                    os.fsync(self._file.fileno())
                    self._file.close()
                    self._file = None
        except Exception:
            _logger.debug("closing %s failed", self._path, exc_info=True)
