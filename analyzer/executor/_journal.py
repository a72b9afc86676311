"""The driver's journal of work units: one durable sqlite record per unit, by content key.

Every resumable analysis keeps its units here (interventions in ``<run>/journal.sqlite``, the
audit in ``<run>/units.sqlite``). Only the driver writes it (workers return results;
:meth:`Executor.map` hands them to the driver's ``on_result``), each record in its own
committed transaction as it arrives, so a run killed at any moment keeps every result that
reached the driver and a re-run into the same folder starts none of the completed ones again.

A unit's record (:class:`UnitRecord`) holds its status (``ok`` or ``failed``), how many times
it was recorded and its result (msgspec JSON). A completed unit is never overwritten (the
first completed result wins); a failed one is retried by a later run and replaced by the new
outcome. A row of a status this release does not know counts as not completed.

Opening the journal locks its run folder (:class:`~groundtrace.analyzer._runlock.RunFolderLock`)
until :meth:`UnitJournal.close`: a second driver into the folder is refused while this one runs.
A journal written by groundtrace 0.1 (``results`` or ``units`` table) is moved into the one
table when it is opened, so such a run folder resumes too.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from groundtrace.analyzer._store import RunStore
from groundtrace.analyzer.errors import ConfigError, InputError

__all__ = ["FAILED", "OK", "UnitJournal", "UnitRecord"]

T = TypeVar("T")

#: Status of a completed unit (its result is kept and never run again).
OK: Final = "ok"
#: Status of a failed unit (a later run retries it and replaces the record).
FAILED: Final = "failed"

_TABLE = "unit_records"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    updated REAL NOT NULL,
    result BLOB NOT NULL
)
"""
_COLUMNS = "key, kind, status, attempts, updated, result"
# A completed row is left as it is; anything else is replaced, its attempts counted on.
_UPSERT = f"""
INSERT INTO {_TABLE} ({_COLUMNS}) VALUES (?, ?, ?, 1, ?, ?)
ON CONFLICT(key) DO UPDATE SET
    kind = excluded.kind, status = excluded.status, attempts = {_TABLE}.attempts + 1,
    updated = excluded.updated, result = excluded.result
WHERE {_TABLE}.status != '{OK}'
"""
# The 0.1 tables: the executor's ``results`` (kept results only) and the replay ``units``.
_LEGACY = {
    "results": "SELECT key, kind, 'ok', 1, updated, result FROM results",
    "units": "SELECT key, 'UnitResult', status, attempts, updated, CAST(result AS BLOB) FROM units",
}


class UnitRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One unit's record in the journal.

    Attributes:
        key: the unit's content key.
        kind: the type name of the result (``Answer``, ``UnitResult``...).
        status: ``ok`` (completed) or ``failed`` (retried by a later run); another value
            (written by another release) counts as not completed.
        attempts: how many outcomes were recorded for the unit (failures, then the success).
        updated: when the record was last written (seconds since the epoch).
        result: the result as msgspec JSON.
    """

    key: str
    kind: str
    status: str
    attempts: int = 1
    updated: float = 0.0
    result: bytes = b""

    @property
    def ok(self) -> bool:
        """Whether the unit completed."""
        return self.status == OK

    def decode(self, kind: type[T], *, where: str | Path = "unit journal") -> T:
        """The result decoded as ``kind``.

        Raises:
            InputError: the record holds another kind, or its result does not decode as
                ``kind`` (the journal was written by something else: start a new run folder).
        """
        name = getattr(kind, "__name__", None)
        if name is not None and name != self.kind:
            raise InputError(
                f"journal record {self.key} holds a {self.kind}, not a {name}: this run folder "
                "belongs to another analysis (use a new --out)",
                path=str(where),
            )
        try:
            return msgspec.json.decode(self.result, type=kind)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise InputError(
                f"journal record {self.key} does not decode as a {self.kind}: {exc} (the "
                "journal was written by another release or damaged: use a new --out)",
                path=str(where),
            ) from exc


def _record(row: tuple[Any, ...]) -> UnitRecord:
    key, kind, status, attempts, updated, result = row
    return UnitRecord(
        key=str(key), kind=str(kind), status=str(status), attempts=int(attempts),
        updated=float(updated), result=bytes(result),
    )  # fmt: skip


class UnitJournal(RunStore):
    """Work units by content key, one :class:`UnitRecord` each (sqlite, WAL, ``FULL`` sync).

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
        try:
            self._adopt_legacy()
        except sqlite3.Error as exc:
            self.close()
            raise ConfigError(f"cannot read the unit journal: {exc}", path=str(path)) from exc

    def _adopt_legacy(self) -> None:
        """Move the rows of 0.1 tables into the one table (in one transaction)."""
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        legacy = [name for (name,) in rows.fetchall() if name in _LEGACY]
        if not legacy:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for name in legacy:
                select = _LEGACY[name]
                self._conn.execute(f"INSERT OR IGNORE INTO {_TABLE} ({_COLUMNS}) {select}")
                self._conn.execute(f"DROP TABLE {name}")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def entry(self, key: str) -> UnitRecord | None:
        """The record of ``key`` (completed, failed or unknown status), if any."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_TABLE} WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else _record(row)

    def get(self, key: str, kind: type[T]) -> T | None:
        """The completed result of ``key`` decoded as ``kind``; ``None`` when absent or not
        completed.

        Raises:
            InputError: the record holds another kind or does not decode.
        """
        record = self.entry(key)
        if record is None or not record.ok:
            return None
        return record.decode(kind, where=self.path)

    def completed(self, kind: type[T]) -> Iterator[T]:
        """The completed results of ``kind`` (records of other kinds are skipped), by key.

        Raises:
            InputError: a record of ``kind`` does not decode.
        """
        name = getattr(kind, "__name__", "")
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_TABLE} WHERE status = ? AND kind = ? ORDER BY key",
                (OK, name),
            ).fetchall()
        for row in rows:
            yield _record(row).decode(kind, where=self.path)

    def record(self, key: str, result: object, *, ok: bool = True) -> UnitRecord:
        """Record ``result`` (a msgspec-encodable record) as the outcome of ``key``.

        A completed unit is never overwritten (neither by a failure nor by a second result);
        a failed one is replaced and its attempts counted.

        Args:
            key: the unit's content key.
            result: the unit's result.
            ok: whether the unit completed (``False``: a failure a later run retries).

        Returns:
            The unit's record after the call (the earlier one when it had completed).
        """
        data = msgspec.json.encode(result)
        status = OK if ok else FAILED
        with self._lock:
            self._conn.execute(_UPSERT, (key, type(result).__name__, status, time.time(), data))
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM {_TABLE} WHERE key = ?", (key,)
            ).fetchone()
        return _record(row)

    def put(self, key: str, result: object) -> None:
        """Store the completed ``result`` under ``key``; the first completed result wins."""
        self.record(key, result, ok=True)

    def counts(self) -> dict[str, int]:
        """Units by status (``ok``, ``failed``, and any status of another release)."""
        with self._lock:
            rows = self._conn.execute(f"SELECT status, COUNT(*) FROM {_TABLE} GROUP BY status")
            return {str(status): int(n) for status, n in rows.fetchall()}

    def __len__(self) -> int:
        """The number of completed units."""
        with self._lock:
            (count,) = self._conn.execute(
                f"SELECT COUNT(*) FROM {_TABLE} WHERE status = ?", (OK,)
            ).fetchone()
        return int(count)
