"""Content-addressed store of completed model calls (sqlite3 in WAL mode), and the claims
that let every process sharing the store make each call once.

A client about to call claims the request's key (:meth:`CallCache.claim`); one that finds a
live claim of another waits for its answer instead of sending the same request. The claimant
renews its claim while the call runs, so the claim of a process that died expires (after
:data:`LEASE` seconds) and a waiter takes the call over. A call that fails leaves its failure
for the askers that were waiting for it; a later asker calls again, as a re-run would.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Final, Literal

from groundtrace.analyzer._store import open_store

from ._types import CallFailure, CallResult, ChatResponse, FailureKind

__all__ = ["LEASE", "CallCache", "ClaimState"]

#: Seconds a claim holds without renewal (its claimant renews it every third of that).
LEASE: Final = 15.0

#: What :meth:`CallCache.claim` found: the answer, the failure of the call waited for, the
#: claim taken (call now), or another asker's live claim (wait, then ask again).
ClaimState = Literal["answered", "failed", "mine", "busy"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT,
    text TEXT NOT NULL,
    finish_reason TEXT,
    usage TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created REAL NOT NULL
)
"""
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL,
    failed REAL,
    failure TEXT
)
"""
_CALL = "SELECT model, text, finish_reason, usage, metadata FROM calls WHERE key = ?"
_CLAIM = "SELECT owner, expires, failed, failure FROM claims WHERE key = ?"


class CallCache:
    """Completed calls keyed by :func:`cache_key`; safe across threads and processes.

    Only completed responses are stored; failures are never cached, so a re-run retries them.
    Writers use ``INSERT OR IGNORE`` so two processes finishing the same call agree. A cache
    pickles as its path and reopens the same file where it is unpickled (a cluster worker on
    the same machine or shared storage).

    Args:
        path: sqlite file (created with its parent folder), usually ``<run>/llm_cache.sqlite``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = open_store(self.path, _SCHEMA, what="model-call cache", durable=False)
        self._conn.execute(_CLAIMS)
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[CallCache], tuple[Path]]:
        return (CallCache, (self.path,))

    def get(self, key: str) -> ChatResponse | None:
        """The cached response for ``key`` (marked ``cached=True``, 0 attempts), if any."""
        with self._lock:
            row = self._conn.execute(_CALL, (key,)).fetchone()
        if row is None:
            return None
        return _response(key, row, cached=True)

    def put(
        self, response: ChatResponse, metadata: dict[str, Any] | None = None, owner: str = ""
    ) -> None:
        """Store a completed response (first writer wins) and drop ``owner``'s claim of it.

        The response's attempts are kept in the metadata, for the askers who waited for it.
        """
        meta = {**(metadata or {}), "attempts": response.attempts}
        row = (
            response.key, response.model, response.text, response.finish_reason,
            json.dumps(response.usage, sort_keys=True),
            json.dumps(meta, sort_keys=True, default=str), time.time(),
        )  # fmt: skip
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                self._conn.execute(
                    "DELETE FROM claims WHERE key = ? AND owner = ?", (response.key, owner)
                )
            finally:
                self._conn.execute("COMMIT")

    def claim(
        self, key: str, owner: str, asked: float, lease: float = LEASE
    ) -> tuple[ClaimState, CallResult | None]:
        """Claim the call of ``key`` for ``owner``, who began asking at ``asked`` (epoch s).

        Returns ``("answered", response)`` once a call of the key completed (as made for
        the asker: not ``cached``, with the call's attempts); ``("failed", failure)`` when
        the call waited for failed after ``asked``; ``("mine", None)`` when ``owner`` holds
        the claim now (for ``lease`` seconds unless renewed); ``("busy", None)`` while
        another asker's claim is live.
        """
        with self._lock:
            state = self._look(key, owner, asked)
            if state[0] != "mine":
                return state
            self._conn.execute("BEGIN IMMEDIATE")  # look again and claim, atomically
            try:
                state = self._look(key, owner, asked)
                if state[0] == "mine":
                    self._conn.execute(
                        "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, NULL, NULL)",
                        (key, owner, time.time() + lease),
                    )
            finally:
                self._conn.execute("COMMIT")
        return state

    def _look(self, key: str, owner: str, asked: float) -> tuple[ClaimState, CallResult | None]:
        call = self._conn.execute(_CALL, (key,)).fetchone()
        if call is not None:
            return "answered", _response(key, call, cached=False)
        held = self._conn.execute(_CLAIM, (key,)).fetchone()
        if held is None:
            return "mine", None
        holder, expires, failed, failure = held
        if failed is not None:
            if failed >= asked:
                return "failed", _failure(key, json.loads(failure))
            return "mine", None  # the failure of an earlier asker's call: call again
        if holder != owner and expires > time.time():
            return "busy", None
        return "mine", None  # expired: its claimant is gone

    def renew(self, key: str, owner: str, lease: float = LEASE) -> None:
        """Extend ``owner``'s claim of ``key`` to ``lease`` seconds from now."""
        with self._lock:
            self._conn.execute(
                "UPDATE claims SET expires = ? WHERE key = ? AND owner = ? AND failed IS NULL",
                (time.time() + lease, key, owner),
            )

    def fail(self, failure: CallFailure, owner: str) -> None:
        """Leave ``owner``'s failed call for the askers waiting for it (they stop waiting)."""
        record = {
            "kind": failure.kind.value, "message": failure.message, "status": failure.status,
            "attempts": failure.attempts, "raw": failure.raw,
        }  # fmt: skip
        with self._lock:
            self._conn.execute(
                "UPDATE claims SET failed = ?, failure = ? WHERE key = ? AND owner = ?",
                (time.time(), json.dumps(record), failure.key, owner),
            )

    def release(self, key: str, owner: str) -> None:
        """Drop ``owner``'s claim with no result (a cancelled call): a waiter takes it over."""
        with self._lock:
            self._conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner))

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


def _response(key: str, row: tuple[Any, ...], *, cached: bool) -> ChatResponse:
    model, text, finish_reason, usage, metadata = row
    return ChatResponse(
        text=text,
        finish_reason=finish_reason,
        model=model,
        usage={str(k): int(v) for k, v in json.loads(usage).items()},
        key=key,
        cached=cached,
        attempts=0 if cached else int(json.loads(metadata).get("attempts", 1)),
    )


def _failure(key: str, record: dict[str, Any]) -> CallFailure:
    return CallFailure(
        FailureKind(record["kind"]), record["message"], key, status=record["status"],
        attempts=record["attempts"], raw=record["raw"],
    )  # fmt: skip
