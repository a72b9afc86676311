"""One run at a time per run folder: an exclusive ``flock`` on ``<run>/.groundtrace.lock``.

Every analysis that writes a run folder holds this lock while it runs: the journals of the
interventions and the audit take it when they are opened (so the library's users get it too),
the commands without a journal (judge, gate, paths) around their work. A second run into a
folder in use is refused at once with :class:`RunFolderBusyError`, naming the holder (pid,
host, command, start time), which the holder writes into the lock file.

The kernel releases an ``flock`` when its holder dies, however it dies, so a lock left by a
killed run (SIGKILL, a lost machine) is never in the way: the next run takes it. A holder
that finishes empties the file before releasing it, so a run that finds an identity in a lock
it could take knows the previous run stopped without finishing, and says so on the
``groundtrace.analyzer`` logger (a warning line on stderr when logging is not configured).

The file descriptor is not inherited by the processes a run starts (Python's default), so a
worker that outlives a killed driver does not keep its folder locked. POSIX only (``fcntl``);
on a network file system the lock is as good as the server's locking.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import logging
import os
import socket
import sys
from pathlib import Path
from types import TracebackType

import msgspec

from groundtrace.analyzer.errors import ConfigError, RunFolderBusyError

__all__ = ["LOCK_NAME", "Holder", "RunFolderLock", "read_holder"]

#: The lock file in the run folder (hidden: trace readers skip it).
LOCK_NAME = ".groundtrace.lock"

_log = logging.getLogger("groundtrace.analyzer")


class Holder(msgspec.Struct, frozen=True):
    """Who holds a run folder: written into the lock file by the holder."""

    pid: int
    host: str
    command: str
    started: str

    def describe(self) -> str:
        """``pid 123 on host, started <time>, command: <argv>``."""
        return f"pid {self.pid} on {self.host}, started {self.started}, command: {self.command}"


def _me() -> Holder:
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "python"
    return Holder(os.getpid(), socket.gethostname(), command[:500], started)


def _decode(data: bytes) -> Holder | None:
    try:
        return msgspec.json.decode(data, type=Holder) if data.strip() else None
    except msgspec.DecodeError:
        return None  # written partly (the holder is writing it, or was killed doing so)


def read_holder(folder: str | Path) -> Holder | None:
    """The identity written in ``folder``'s lock file, if any (held or left by a killed run)."""
    try:
        return _decode((Path(folder) / LOCK_NAME).read_bytes())
    except OSError:
        return None


class RunFolderLock:
    """The exclusive lock of one run folder, held from :meth:`acquire` to :meth:`release`.

    Attributes:
        folder: the run folder.
        took_over: the identity of a run that stopped without releasing the folder, when this
            lock was taken after it.
    """

    def __init__(self, folder: Path, fd: int, took_over: Holder | None) -> None:
        self.folder = folder
        self.took_over = took_over
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: str | Path) -> RunFolderLock:
        """Lock ``folder`` (created) for this process, or refuse at once.

        Raises:
            RunFolderBusyError: another run holds the folder.
            ConfigError: the folder or its lock file cannot be created.
        """
        where = Path(folder)
        path = where / LOCK_NAME
        try:
            where.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(f"cannot lock the run folder: {exc}", path=str(where)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _decode(os.pread(fd, 4096, 0))
            os.close(fd)
            raise RunFolderBusyError(str(where), holder.describe() if holder else None) from None
        except OSError as exc:
            os.close(fd)
            raise ConfigError(f"cannot lock the run folder: {exc}", path=str(where)) from exc
        try:
            previous = _decode(os.pread(fd, 4096, 0))
            data = msgspec.json.encode(_me())
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        except OSError as exc:
            os.close(fd)
            raise ConfigError(f"cannot lock the run folder: {exc}", path=str(where)) from exc
        if previous is not None:
            _log.warning(
                "taking over the run folder %s from a run that stopped without finishing (%s)",
                where, previous.describe(),
            )  # fmt: skip
        return cls(where, fd, previous)

    def release(self) -> None:
        """Empty the lock file (a clean finish) and release the lock; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> RunFolderLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
