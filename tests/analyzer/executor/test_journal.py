"""The one unit journal: its record, completed vs failed units, counts, bad and unknown rows,
and the journals of 0.1 run folders adopted on open."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.executor._journal import UnitRecord
from groundtrace.analyzer.replay import UnitResult, journaled_trace_ids
from groundtrace.analyzer.replay._types import UnitStatus


class Verdict(msgspec.Struct, frozen=True):
    """A small result record of another kind (as the audit journals its answers)."""

    label: str


def _ok(key: str, trace: str | None = None) -> UnitResult:
    return UnitResult(key, UnitStatus.OK, answer="Lisbon", cited_ids=("c1",),
                      counterfactual_trace_id=trace, extra={"raw": "Lisbon [c1]"})  # fmt: skip


def test_the_record_of_a_unit_keeps_status_attempts_and_its_result(tmp_path: Path) -> None:
    journal = UnitJournal(tmp_path / "journal.sqlite")
    try:
        failed = journal.record("k1", UnitResult.failure("k1", "http_error", "503"), ok=False)
        assert isinstance(failed, UnitRecord)
        assert (failed.key, failed.kind, failed.status, failed.attempts) == (
            "k1", "UnitResult", "failed", 1,
        )  # fmt: skip
        assert journal.get("k1", UnitResult) is None  # a failure is not a completed unit
        assert journal.entry("k1") == failed
        again = journal.record("k1", UnitResult.failure("k1", "http_error", "502"), ok=False)
        assert again.attempts == 2 and again.status == "failed"  # retried and replaced
        done = journal.record("k1", _ok("k1", "t" * 32), ok=True)
        assert (done.status, done.attempts, done.ok) == ("ok", 3, True)
        # a completed unit is never overwritten: not by a failure, not by a second result
        journal.record("k1", UnitResult.failure("k1", "exception", "late"), ok=False)
        journal.put("k1", UnitResult("k1", UnitStatus.OK, answer="Porto"))
        kept = journal.get("k1", UnitResult)
        assert kept == _ok("k1", "t" * 32)
        assert (
            kept is not None and kept.cited_ids == ("c1",) and kept.extra == {"raw": "Lisbon [c1]"}
        )
        assert journal.entry("k1") == done
        journal.record("k2", UnitResult.failure("k2", "exception", "boom"), ok=False)
        journal.put("v1", Verdict("yes"))
        assert journal.counts() == {"ok": 2, "failed": 1}
        assert len(journal) == 2  # completed units
        assert list(journal.completed(UnitResult)) == [kept]  # of its kind only
        assert list(journal.completed(Verdict)) == [Verdict("yes")]
        assert journaled_trace_ids(journal) == {"t" * 32}
    finally:
        journal.close()
    reopened = UnitJournal(tmp_path / "journal.sqlite")
    try:
        assert reopened.get("k1", UnitResult) == kept  # durable
    finally:
        reopened.close()


def test_unit_result_is_a_frozen_msgspec_record() -> None:
    result = _ok("k", "t" * 32)
    assert msgspec.json.decode(msgspec.json.encode(result), type=UnitResult) == result
    with pytest.raises(AttributeError):
        result.answer = "Porto"  # type: ignore[misc]
    assert not hasattr(UnitResult, "to_json") and not hasattr(UnitResult, "from_json")


def _raw(path: Path, *rows: tuple[object, ...]) -> None:
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO unit_records VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.close()


def test_bad_and_unknown_rows(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    UnitJournal(path).close()
    _raw(
        path,
        ("torn", "UnitResult", "ok", 1, 0.0, b'{"key": "torn", "sta'),
        ("wrong", "UnitResult", "ok", 1, 0.0, b'{"key": 5, "status": "ok"}'),
        ("other", "Verdict", "ok", 1, 0.0, b'{"label": "yes"}'),
        ("later", "UnitResult", "running", 1, 0.0, b"{}"),  # a status of another release
    )
    journal = UnitJournal(path)
    try:
        for key, words in [("torn", "does not decode"), ("wrong", "does not decode"),
                           ("other", "holds a Verdict, not a UnitResult")]:  # fmt: skip
            with pytest.raises(InputError, match=words) as caught:
                journal.get(key, UnitResult)
            assert caught.value.path == str(path) and key in str(caught.value)
        with pytest.raises(InputError, match="does not decode"):
            list(journal.completed(UnitResult))
        # an unknown status is not completed: the unit runs again and its outcome replaces it
        assert journal.get("later", UnitResult) is None
        assert journal.counts() == {"ok": 3, "running": 1}
        assert journal.record("later", _ok("later"), ok=True).attempts == 2
        assert journal.get("later", UnitResult) == _ok("later")
    finally:
        journal.close()


def test_journals_of_0_1_run_folders_are_adopted(tmp_path: Path) -> None:
    replay, units = tmp_path / "interventions" / "journal.sqlite", tmp_path / "units.sqlite"
    replay.parent.mkdir()
    old: dict[str, object] = {"key": "k1", "status": "ok", "answer": "Lisbon", "confidence": None,
           "cited_ids": ["c1"], "parse_error": None, "counterfactual_trace_id": "t" * 32,
           "model_calls": 1, "cached": None, "error_kind": None, "error_message": None,
           "extra": {}}  # fmt: skip
    with sqlite3.connect(replay) as conn:
        conn.execute(
            "CREATE TABLE units (key TEXT PRIMARY KEY, trace_id TEXT NOT NULL, operator TEXT "
            "NOT NULL, target_id TEXT, replacement_id TEXT, seed INTEGER NOT NULL, status TEXT "
            "NOT NULL, result TEXT NOT NULL, error_kind TEXT, error_message TEXT, attempts "
            "INTEGER NOT NULL DEFAULT 1, updated REAL NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO units VALUES (?, 'tr', 'REMOVE', 'c1', NULL, 0, ?, ?, NULL, NULL, ?, 1.0)",
            [("k1", "ok", json.dumps(old, sort_keys=True), 2),
             ("k2", "failed", json.dumps({**old, "key": "k2", "status": "failed"}), 1)],
        )  # fmt: skip
    conn.close()
    with sqlite3.connect(units) as conn:
        conn.execute("CREATE TABLE results (key TEXT PRIMARY KEY, kind TEXT NOT NULL, result "
                     "BLOB NOT NULL, updated REAL NOT NULL)")  # fmt: skip
        conn.execute("INSERT INTO results VALUES ('v1', 'Verdict', ?, 1.0)", (b'{"label":"no"}',))
    conn.close()
    journal = UnitJournal(replay)
    try:
        assert journal.get("k1", UnitResult) == msgspec.structs.replace(
            _ok("k1", "t" * 32), model_calls=1, extra={}
        )
        assert msgspec.structs.replace(journal.entry("k1"), result=b"") == UnitRecord(  # type: ignore[type-var]
            key="k1", kind="UnitResult", status="ok", attempts=2, updated=1.0
        )
        assert journal.counts() == {"ok": 1, "failed": 1}
    finally:
        journal.close()
    journal = UnitJournal(units)
    try:
        assert journal.get("v1", Verdict) == Verdict("no") and len(journal) == 1
    finally:
        journal.close()
    with sqlite3.connect(units) as conn:  # the old table is gone: adopted once
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "results" not in tables
