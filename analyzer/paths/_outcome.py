"""What a run of the ``paths`` analysis hands back: its report and what the report leaves out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from groundtrace.analyzer.errors import TraceReadError

from ._run import PathReport

__all__ = ["PathsResult", "UnreadableLine"]


class UnreadableLine(msgspec.Struct, frozen=True, kw_only=True):
    """A trace line (or record) that could not be read and was skipped.

    A record, not the exception, so that a run encodes as JSON (``groundtrace analyze paths
    --json``); :meth:`error` gives the exception back.

    Attributes:
        path: the trace file.
        line: its 1-based line, if known.
        field: the field that was wrong, if known.
        reason: why it could not be read.
    """

    path: str | None = None
    line: int | None = None
    field: str | None = None
    reason: str

    @classmethod
    def of(cls, error: TraceReadError) -> UnreadableLine:
        """The record of ``error``."""
        return cls(path=error.path, line=error.line, field=error.field, reason=error.reason)

    def error(self) -> TraceReadError:
        """The :class:`~groundtrace.analyzer.errors.TraceReadError` the reader raised."""
        return TraceReadError(self.reason, path=self.path, line=self.line, field=self.field)

    def __str__(self) -> str:
        """``file:line [field]: reason``, as the reader's error says it."""
        return str(self.error())


@dataclass(frozen=True, slots=True)
class PathsResult:
    """A run of the ``paths`` analysis (:func:`groundtrace.analyzer.paths.run`): its report
    and what the report does not keep.

    Attributes:
        report: the record written to ``report.json`` (the unreadable trace lines, when
            any, are one of its ``notes``).
        read_errors: every trace line (or record) that could not be read and was skipped,
            in the order read (``groundtrace paths --strict`` refuses the run when any).
        roots: trace id -> root span id of every trace with a verdict: where a write-back
            puts its path status (:func:`groundtrace.analyzer.paths.verdicts`).
    """

    report: PathReport
    read_errors: tuple[UnreadableLine, ...] = ()
    roots: Mapping[str, str] = field(default_factory=dict)
