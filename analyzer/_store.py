"""The embedded sqlite store behind the model-call cache and the replay journal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from groundtrace.analyzer.errors import ConfigError

__all__ = ["open_store"]


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
