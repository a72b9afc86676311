"""Content-addressed store of completed model calls (sqlite3 in WAL mode)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from groundtrace.collectors.errors import ConfigError

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
    Writers use ``INSERT OR IGNORE`` so two processes finishing the same call agree.

    Args:
        path: sqlite file (created with its parent folder), usually ``<run>/llm_cache.sqlite``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(self.path), timeout=30.0, check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the model-call cache: {exc}", path=str(path)) from exc
        self._lock = threading.Lock()

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
