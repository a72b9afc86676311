"""Durable, size-rotated OTLP-JSON lines files with group commit.

Every accepted batch is one line. :meth:`BatchStore.submit` hands a line to a single writer
thread and returns a future that completes only once the line is written *and* ``fsync``'d;
the receiver answers 200 after that. Lines submitted while the writer is busy are written
together and share one ``fsync`` (group commit), which is what keeps durability cheap under
concurrent load.

A process killed mid-write can leave a torn last line. Such a line was never acknowledged
(acknowledgement follows the fsync of the complete line), so :func:`repair_torn_tail` cuts it
off when a store is opened on the same directory again.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["FILE_PREFIX", "FILE_SUFFIX", "BatchStore", "StoreStats", "repair_torn_tail"]

#: Name prefix of the files the receiver writes (``traces-<utc>-<pid>-<seq>.jsonl``).
FILE_PREFIX: Final = "traces-"
#: Name suffix of the files the receiver writes.
FILE_SUFFIX: Final = ".jsonl"


@dataclass(slots=True)
class StoreStats:
    """Counters of a :class:`BatchStore` (read them after :meth:`BatchStore.close`)."""

    lines: int = 0
    bytes: int = 0
    fsyncs: int = 0
    files: int = 0
    torn_bytes_repaired: int = 0


def repair_torn_tail(path: Path) -> int:
    """Truncate ``path`` after its last newline; return the number of bytes cut off.

    Only ever applied to files this store wrote: a missing final newline means the process
    died while writing a line that had not been acknowledged.
    """
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        position = size
        block = 65_536
        while position > 0:
            start = max(0, position - block)
            handle.seek(start)
            chunk = handle.read(position - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            position = start
        else:
            keep = 0
        if keep == size:
            return 0
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
        return size - keep


class BatchStore:
    """Appends lines to rotating files in ``out_dir``; each future resolves after fsync.

    Args:
        out_dir: directory of the files (created if missing).
        rotate_bytes: a file is closed and a new one started once it reaches this size.
    """

    def __init__(self, out_dir: Path, *, rotate_bytes: int = 64 * 1024 * 1024) -> None:
        if rotate_bytes <= 0:
            raise ValueError("rotate_bytes must be positive")
        self.out_dir = Path(out_dir)
        self.rotate_bytes = rotate_bytes
        self.stats = StoreStats()
        self._cond = threading.Condition()
        self._pending: list[tuple[bytes | bytearray, Future[None]]] = []
        self._closing = False
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._file_size = 0
        self._seq = 0
        self.current_path: Path | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Create the directory, repair torn tails left by a killed run, start the writer."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.out_dir.glob(f"{FILE_PREFIX}*{FILE_SUFFIX}")):
            self.stats.torn_bytes_repaired += repair_torn_tail(path)
        self._thread = threading.Thread(
            target=self._run, name="groundtrace-receiver-writer", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Write and fsync everything submitted so far, then close the current file."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._close_file()

    def submit(self, line: bytes | bytearray) -> Future[None]:
        """Queue one complete line (ending in ``\\n``); the future resolves once it is durable."""
        future: Future[None] = Future()
        with self._cond:
            if self._closing:
                future.set_exception(RuntimeError("the store is closed"))
                return future
            self._pending.append((line, future))
            self._cond.notify()
        return future

    # -- writer thread -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                group, self._pending = self._pending, []
                closing = self._closing
            if group:
                self._commit(group)
            if closing and not group:
                return

    def _commit(self, group: list[tuple[bytes | bytearray, Future[None]]]) -> None:
        # Rotation happens only between groups, so lines are written whole into one file.
        try:
            if self._fd is None or self._file_size >= self.rotate_bytes:
                self._open_next()
            assert self._fd is not None
            size = 0
            for line, _ in group:  # each written as it is: a line of tens of MiB is not copied
                view = memoryview(line)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                size += len(line)
            os.fsync(self._fd)
        except OSError as exc:
            self._close_file()  # the next group starts a fresh file
            for _, future in group:
                future.set_exception(exc)
            return
        self._file_size += size
        self.stats.lines += len(group)
        self.stats.bytes += size
        self.stats.fsyncs += 1
        for _, future in group:
            future.set_result(None)

    def _open_next(self) -> None:
        self._close_file()
        self._seq += 1
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = self.out_dir / f"{FILE_PREFIX}{stamp}-{os.getpid()}-{self._seq:06d}{FILE_SUFFIX}"
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self._file_size = 0
        self.current_path = path
        self.stats.files += 1
        # Make the new directory entry durable too, or an fsync'd file could vanish on a crash.
        dir_fd = os.open(self.out_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def _close_file(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
        except OSError:
            pass  # every acknowledged line was already fsync'd by its own commit
        finally:
            os.close(fd)
