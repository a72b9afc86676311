"""The embedded sqlite store behind the model-call cache and the run journals."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from groundtrace.analyzer._runlock import RunFolderLock
from groundtrace.analyzer.errors import ConfigError

__all__ = ["RunStore", "open_store"]


def open_store(path: Path, schema: str, *, what: str, durable: bool) -> sqlite3.Connection:
    """Open (creating it and its folder) a WAL-mode sqlite file shared by threads.

    Args:
        path: the sqlite file.
        schema: ``CREATE TABLE IF NOT EXISTS ...`` statement run on open.
        what: what the store is, for the error message.
        durable: ``synchronous=FULL`` (every commit survives a crash) instead of ``NORMAL``.

    Raises:
        ConfigError: the file cannot be created or opened.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), timeout=30.0, check_same_thread=False, isolation_level=None
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        conn.execute(schema)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open the {what}: {exc}", path=str(path)) from exc
    return conn


class RunStore:
    """A durable store in a run folder (:func:`open_store`, ``durable``) that holds the
    folder's lock from its opening to :meth:`close` (the base of the run journals).

    Args:
        path: the sqlite file, in the run folder.
        schema: the store's ``CREATE TABLE IF NOT EXISTS ...``.
        what: what the store is, for the error message.
        lock: hold the run folder's lock while open (``False`` only to read a store that
            another run may be writing).

    Raises:
        RunFolderBusyError: ``lock`` and another run holds the folder.
        ConfigError: the store cannot be opened.
    """

    def __init__(self, path: str | Path, schema: str, *, what: str, lock: bool) -> None:
        self.path = Path(path)
        self._folder = RunFolderLock.acquire(self.path.parent) if lock else None
        try:
            self._conn = open_store(self.path, schema, what=what, durable=True)
        except BaseException:
            if self._folder is not None:
                self._folder.release()
            raise
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the connection and release the run folder."""
        with self._lock:
            self._conn.close()
        if self._folder is not None:
            self._folder.release()
