"""The root of groundtrace's exception tree and the errors of reading input.

Every error the collectors or the analyzer raise on purpose is a :class:`GroundtraceError`;
foreign errors (``json.JSONDecodeError``, ``google.protobuf`` decode errors, ``OSError``...) are
mapped to one of these at the boundary, with the file and line that caused them. The analyzer's
own errors extend this tree in :mod:`groundtrace.analyzer.errors`, which documents all of it
with its exit codes.
"""

from __future__ import annotations

__all__ = [
    "GroundtraceError",
    "InputError",
    "TraceReadError",
]


class GroundtraceError(Exception):
    """Root of every error groundtrace raises on purpose."""

    exit_code: int = 2


class InputError(GroundtraceError):
    """A user-supplied file or value is invalid.

    Attributes:
        path: the file (or ``"<stdin>"``) the bad input came from, if any.
        line: 1-based line number within ``path``, if known.
        field: the field (attribute key, JSON path...) that was wrong, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = ""
        if path is not None:
            where = path if line is None else f"{path}:{line}"
        if field is not None:
            where = f"{where} [{field}]" if where else f"[{field}]"
        super().__init__(f"{where}: {message}" if where else message)


class TraceReadError(InputError):
    """A trace file (or a record in it) could not be read."""
