"""Journal of completed replay units: a sqlite table in the run folder.

A unit is keyed by :attr:`ReplayUnit.key`. A completed unit is never run again: re-running or
resuming a killed run reads its result from here (and model calls from the call cache), so it
repeats zero completed units and zero completed calls. Failed units are journaled with their
kind and message and are retried by a later run (their failure is replaced by the new result).

Opening the journal locks its run folder (:class:`~groundtrace.analyzer._runlock.RunFolderLock`)
until :meth:`Journal.close`: a second run into the folder is refused while this one runs.
"""

from __future__ import annotations

import time
from pathlib import Path

from groundtrace.analyzer._store import RunStore

from ._types import ReplayUnit, UnitResult, UnitStatus

__all__ = ["Journal"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    key TEXT PRIMARY KEY,
    trace_id TEXT NOT NULL,
    operator TEXT NOT NULL,
    target_id TEXT,
    replacement_id TEXT,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL,
    error_kind TEXT,
    error_message TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    updated REAL NOT NULL
)
"""


class Journal(RunStore):
    """Completed and failed units of one run folder (sqlite, WAL, safe across threads).

    Args:
        path: the sqlite file, usually ``<run>/journal.sqlite``.
        lock: hold the run folder's lock while open (``False`` only to read a journal that
            another run may be writing, e.g. an estimate).

    Raises:
        RunFolderBusyError: ``lock`` and another run holds the folder.
        ConfigError: the journal cannot be opened.
    """

    def __init__(self, path: str | Path, *, lock: bool = True) -> None:
        super().__init__(path, _SCHEMA, what="replay journal", lock=lock)

    def get(self, key: str) -> UnitResult | None:
        """The journaled result of ``key`` (completed or failed), if any."""
        with self._lock:
            row = self._conn.execute("SELECT result FROM units WHERE key = ?", (key,)).fetchone()
        return None if row is None else UnitResult.from_json(row[0])

    def completed(self, key: str) -> UnitResult | None:
        """The result of ``key`` when it completed; ``None`` when absent or failed."""
        result = self.get(key)
        return result if result is not None and result.ok else None

    def record(self, unit: ReplayUnit, result: UnitResult) -> None:
        """Store the outcome of ``unit`` (a completed unit is never overwritten by a failure)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT status, attempts FROM units WHERE key = ?", (unit.key,)
            ).fetchone()
            if row is not None and row[0] == UnitStatus.OK:
                return
            attempts = 1 if row is None else int(row[1]) + 1
            self._conn.execute(
                "INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    unit.key,
                    unit.trace_id,
                    unit.operator,
                    unit.target_id,
                    unit.replacement_id,
                    unit.seed,
                    result.status,
                    result.to_json(),
                    result.error_kind,
                    result.error_message,
                    attempts,
                    time.time(),
                ),
            )

    def completed_trace_ids(self) -> set[str]:
        """The counterfactual trace ids of the completed units (the traces a run keeps)."""
        with self._lock:
            rows = self._conn.execute("SELECT result FROM units WHERE status = ?", (UnitStatus.OK,))
            results = [UnitResult.from_json(text) for (text,) in rows.fetchall()]
        return {r.counterfactual_trace_id for r in results if r.counterfactual_trace_id}

    def counts(self) -> dict[str, int]:
        """Units by status."""
        with self._lock:
            rows = self._conn.execute("SELECT status, COUNT(*) FROM units GROUP BY status")
            return {str(status): int(n) for status, n in rows.fetchall()}
