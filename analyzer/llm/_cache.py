"""Content-addressed store of completed model calls (sqlite3 in WAL mode)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from groundtrace.analyzer._store import open_store

from ._types import ChatResponse

__all__ = ["CallCache"]

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
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[CallCache], tuple[Path]]:
        return (CallCache, (self.path,))

    def get(self, key: str) -> ChatResponse | None:
        """The cached response for ``key`` (marked ``cached=True``, 0 attempts), if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT model, text, finish_reason, usage FROM calls WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        model, text, finish_reason, usage = row
        return ChatResponse(
            text=text,
            finish_reason=finish_reason,
            model=model,
            usage={str(k): int(v) for k, v in json.loads(usage).items()},
            key=key,
            cached=True,
            attempts=0,
        )

    def put(self, response: ChatResponse, metadata: dict[str, Any] | None = None) -> None:
        """Store a completed response (first writer wins)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    response.key,
                    response.model,
                    response.text,
                    response.finish_reason,
                    json.dumps(response.usage, sort_keys=True),
                    json.dumps(metadata or {}, sort_keys=True, default=str),
                    time.time(),
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
