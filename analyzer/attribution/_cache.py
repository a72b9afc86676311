"""Content-addressed store of scored answers: a rerun never makes a model pass twice."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from groundtrace.analyzer._store import open_store

__all__ = ["ScoreCache", "score_key"]

#: Version of the key canonicalisation; bumping it invalidates every cached score.
KEY_VERSION: Final = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    key TEXT PRIMARY KEY,
    logprobs TEXT NOT NULL
)
"""


def score_key(
    model: str, tier: str, messages: Sequence[Mapping[str, Any]], answer: str, prefix: str = ""
) -> str:
    """sha256 of the canonical JSON of one scoring (model, tier, prompt, reply prefix,
    answer)."""
    payload = json.dumps(
        {"v": KEY_VERSION, "model": model, "tier": tier, "messages": list(messages),
         "prefix": prefix, "answer": answer},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )  # fmt: skip
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ScoreCache:
    """Per-token answer log-probabilities keyed by :func:`score_key` (sqlite, WAL).

    Args:
        path: the sqlite file (created with its folder).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = open_store(self.path, _SCHEMA, what="attribution score cache", durable=False)
        self._lock = threading.Lock()

    def get(self, key: str) -> list[float] | None:
        """The stored per-token log-probabilities of ``key``, if any."""
        with self._lock:
            row = self._conn.execute("SELECT logprobs FROM scores WHERE key = ?", (key,)).fetchone()
        return None if row is None else [float(x) for x in json.loads(row[0])]

    def put(self, key: str, logprobs: Sequence[float]) -> None:
        """Store the per-token log-probabilities of ``key`` (the first writer wins)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO scores VALUES (?, ?)", (key, json.dumps(list(logprobs)))
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM scores").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
