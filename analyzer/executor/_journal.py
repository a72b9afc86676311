"""The driver's journal of finished units: a durable sqlite table of typed results by key.

Only the driver writes it (workers return results; :meth:`Executor.map` hands them to the
driver's ``on_result``), each result in its own committed transaction as it arrives, so a run
killed at any moment keeps every result that reached the driver and a re-run into the same
folder starts none of them again.

Opening the journal locks its run folder (:class:`~groundtrace.analyzer._runlock.RunFolderLock`)
until :meth:`UnitJournal.close`: a second driver into the folder is refused while this one runs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TypeVar

import msgspec

from groundtrace.analyzer._store import RunStore

__all__ = ["UnitJournal"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    result BLOB NOT NULL,
    updated REAL NOT NULL
)
"""


class UnitJournal(RunStore):
    """Finished units by content key (sqlite, WAL, ``synchronous=FULL``).

    Args:
        path: the sqlite file, e.g. ``<run>/units.sqlite``.
        lock: hold the run folder's lock while open (``False`` only to read a journal that
            another run may be writing).

    Raises:
        RunFolderBusyError: ``lock`` and another run holds the folder.
        ConfigError: the journal cannot be opened.
    """

    def __init__(self, path: str | Path, *, lock: bool = True) -> None:
        super().__init__(path, _SCHEMA, what="unit journal", lock=lock)

    def get(self, key: str, kind: type[T]) -> T | None:
        """The journaled result of ``key`` decoded as ``kind``, if any."""
        with self._lock:
            row = self._conn.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        return None if row is None else msgspec.json.decode(row[0], type=kind)

    def put(self, key: str, result: object) -> None:
        """Store ``result`` (a msgspec-encodable record) under ``key``; first writer wins."""
        data = msgspec.json.encode(result)
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?)",
                (key, type(result).__name__, data, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM results").fetchone()
        return int(count)
