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
the file is then ``DIR/traces-<pid>.jsonl`` (one file per process: a forked child writes its
own file under its own pid). Any other path is the file itself, shared by every process that
writes it; parent directories are created.

Whole lines, always: the file is opened with ``O_APPEND`` and each batch is one ``write`` of
whole lines, with no buffer in the process. Several processes (a prefork server's workers)
appending to one file therefore never interleave or tear each other's lines: the kernel puts
each write at the end of the file as one piece (local POSIX file systems; NFS does not
guarantee ``O_APPEND``). A file that does not end with a newline when it is opened (the torn
last line of a run that was killed mid-write) first gets a newline, so the next batch is a
readable line of its own. A write that fails (a full disk can take the first 4,096 bytes of a
batch and refuse the rest) closes the file: the next write opens it again, on a fresh line,
so the fragment stays a line of its own that readers report as torn.

One line per trace: a batch is written as one line per trace it holds (see
:func:`~groundtrace.sdk._otlp_json.trace_lines`), so a damaged line (a torn write, a flipped
byte) costs the spans of one trace in that batch, never those of the traces beside it. A
trace whose spans arrive in several batches is on several lines; readers join them by trace id.

A moved, deleted or replaced file: before each write the path is compared with the open file
(device and inode, as :class:`logging.handlers.WatchedFileHandler` does), with or without
rotation. A file (or its directory) deleted or moved away is created anew; a path that cannot
be opened any more (a directory put in the file's place, a read-only or vanished volume) fails
the batch, which the span processor counts as failed (``export_stats()``).

Failures while the app runs: every failed batch is logged at debug level, and reported at
WARNING on the ``groundtrace.sdk`` logger the first time a failure of its kind (``ENOSPC``,
``EACCES``, ``EISDIR``...) happens, then at most once a minute per kind with the failed writes
and spans lost since the previous report (:mod:`groundtrace.sdk._write_failures`).

Rotation (``max_bytes > 0``): before a batch would make the file exceed ``max_bytes``, the file is
rotated like :class:`logging.handlers.RotatingFileHandler`, keeping the ``.jsonl`` suffix:
``traces.jsonl`` -> ``traces.1.jsonl`` -> ``traces.2.jsonl`` ... up to ``backup_count`` files; the
oldest is deleted. ``backup_count=0`` deletes the full file instead. A single batch larger than
``max_bytes`` is still written whole (lines are never split). Processes sharing one file rotate
it once between them: the rotating process holds an exclusive ``flock`` on the file, and one
that finds the file already renamed reopens the new one instead of rotating again. A batch
another process writes while the rename happens lands whole at the end of the rotated file.

Durability: every export is handed to the operating system (one ``write``); :meth:`force_flush`
and :meth:`shutdown` also ``fsync`` the file so nothing is lost on a clean exit.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._fork import at_fork_reinit
from ._otlp_json import trace_lines
from ._write_failures import WriteFailures

try:
    import fcntl
except ImportError:  # pragma: no cover -- not POSIX: no other process shares the file
    fcntl = None  # type: ignore[assignment]

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


_OPEN_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
_NEWLINE: Final = b"\n"


def _ends_without_newline(path: Path, size: int) -> bool:
    """Whether the non-empty file at ``path`` ends with anything but a newline."""
    if size == 0:
        return False
    try:
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != _NEWLINE
    except OSError:  # unreadable (write-only): nothing known, nothing added
        return False


def _write_all(fd: int, data: bytes) -> None:
    """One ``write`` of ``data`` (a regular file takes it whole); the rest if it did not."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        view = view[written:]


class OTLPJsonFileExporter(SpanExporter):
    """Write span batches as OTLP/JSON lines (Collector file-exporter format).

    Thread-safe and fork-safe: batches from several processors, threads or processes are
    written as whole lines, one per trace. Never raises into the caller: a write error is
    reported as ``SpanExportResult.FAILURE`` (so the span processor counts the batch as
    failed), logged at debug level and, rate-limited, at WARNING.

    Args:
        path: a file path, or a directory (then ``DIR/traces-<pid>.jsonl``, per process).
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
        self._spec = path
        self._path = resolve_trace_path(path)
        self._max_bytes = max(0, int(max_bytes))
        self._backup_count = max(0, int(backup_count))
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._closed = False
        self._failures = WriteFailures()
        at_fork_reinit(self._after_fork)

    @property
    def path(self) -> Path:
        """The file currently written (in a forked child, the child's)."""
        return self._path

    def _after_fork(self) -> None:
        """In a forked child: a fresh lock, the inherited descriptor closed (the parent keeps
        its own), and for a directory the child's own ``traces-<pid>.jsonl``."""
        self._lock = threading.Lock()
        self._failures = WriteFailures()
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                _logger.debug("closing the inherited descriptor of %s failed", self._path)
        self._path = resolve_trace_path(self._spec)

    def _open(self) -> int:
        """The open descriptor, opening the file (on a fresh line) when there is none."""
        if self._fd is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path, _OPEN_FLAGS, 0o666)
            try:
                if _ends_without_newline(self._path, os.fstat(fd).st_size):
                    _write_all(fd, _NEWLINE)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _close(self, *, sync: bool) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def _drop(self, *, sync: bool) -> None:
        """Close the descriptor; a failing ``fsync`` of a file being left is only logged."""
        try:
            self._close(sync=sync)
        except OSError:
            _logger.debug("closing %s failed", self._path, exc_info=True)

    def _renamed(self, fd: int) -> bool:
        """Whether the path no longer names the open file: moved (rotated by another
        process), deleted (or its directory), or replaced by another file or a directory."""
        try:
            named = os.stat(self._path)
        except (FileNotFoundError, NotADirectoryError):
            return True
        opened = os.fstat(fd)
        return (named.st_ino, named.st_dev) != (opened.st_ino, opened.st_dev)

    def _current(self) -> int:
        """The descriptor of the file the path names now (reopened if it was moved, deleted
        or replaced: what this process wrote to the old one is synced first)."""
        if self._fd is not None and self._renamed(self._fd):
            self._drop(sync=True)
            _logger.debug("%s was moved, deleted or replaced: reopening it", self._path)
        return self._open()

    def _make_room(self, fd: int, size: int) -> int:
        """The descriptor to write ``size`` more bytes to: rotate (or follow another
        process's rotation) first when the file would exceed ``max_bytes``."""
        current = os.fstat(fd).st_size
        if current == 0 or current + size <= self._max_bytes:
            return fd
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor is closed
        if self._renamed(fd):  # another process rotated it while this one waited
            self._close(sync=True)
            return self._open()
        os.fsync(fd)
        self._rotate()
        self._close(sync=False)
        return self._open()

    def _rotate(self) -> None:
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
        """Append ``spans`` as one line per trace (one ``write``)."""
        if self._closed:
            return SpanExportResult.FAILURE
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            data = trace_lines(spans)
            with self._lock:
                self._write(data)
        except Exception as exc:
            _logger.debug("OTLP-JSON file export to %s failed", self._path, exc_info=True)
            self._failures.failed(self._path, exc, len(spans))
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _write(self, data: bytes) -> None:
        """Append ``data`` (whole lines) in one ``write``; on failure the file is closed, so
        the next write reopens it on a fresh line after whatever part of ``data`` got in."""
        fd = self._current()
        if self._max_bytes:
            fd = self._make_room(fd, len(data))
        try:
            _write_all(fd, data)
        except OSError:
            self._drop(sync=False)
            raise

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Fsync the current file."""
        try:
            with self._lock:
                if self._fd is not None:
                    os.fsync(self._fd)
        except Exception:
            _logger.debug("flushing %s failed", self._path, exc_info=True)
            return False
        return True

    def shutdown(self) -> None:
        """Fsync and close the file; later exports fail (and are counted as failed)."""
        try:
            with self._lock:
                self._closed = True
                self._close(sync=True)
        except Exception:
            _logger.debug("closing %s failed", self._path, exc_info=True)
        self._failures.flush(self._path)
