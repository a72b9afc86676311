"""Unreadable trace lines, refused or named the same way by every analysis and command.

A line that cannot be read is skipped and named (a note of the report, a warning on stderr);
under ``strict`` (``--strict``) the run refuses instead, naming the first one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from groundtrace.analyzer.errors import TraceReadError

__all__ = ["refuse_unreadable", "skipped_lines"]

#: How many unreadable lines a note names (the report's JSON holds them all).
NAMED: Final = 5


def skipped_lines(errors: Sequence[object]) -> str:
    """``N unreadable trace line(s) skipped: file:line reason; ...`` (the first few named)."""
    named = "; ".join(str(e) for e in errors[:NAMED])
    more = f"; ... and {len(errors) - NAMED} more" if len(errors) > NAMED else ""
    return f"{len(errors)} unreadable trace line(s) skipped: {named}{more}"


def refuse_unreadable(errors: Sequence[object]) -> None:
    """Refuse a run that met unreadable lines (under ``strict``); none: nothing happens.

    Raises:
        TraceReadError: at least one line could not be read (the first one named; exit 2).
    """
    if errors:
        first = errors[0]
        raise TraceReadError(
            f"{len(errors)} unreadable trace line(s) (--strict); first: {first}",
            path=getattr(first, "path", None),
        )
