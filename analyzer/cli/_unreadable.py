"""Unreadable trace lines, handled the same way by every command that reads traces.

A line (or record) that cannot be read is skipped, counted and named on stderr::

    warning: 2 unreadable trace line(s) skipped: traces/a.jsonl:3: invalid JSON ...; ...

and kept as a finding in the command's JSON (``read_errors``). With ``--strict`` the command
refuses instead (exit 2, :class:`~groundtrace.analyzer.errors.TraceReadError`), before it
makes any model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ._app import err_console

if TYPE_CHECKING:
    from groundtrace.analyzer.errors import TraceReadError

__all__ = ["StrictOpt", "check_unreadable", "nothing_read", "read_error_rows"]

StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict", help="Refuse (exit 2) when any trace line cannot be read (else skip it)."
    ),
]


def check_unreadable(errors: Sequence[TraceReadError | str], strict: bool) -> None:
    """Say on stderr how many trace lines were skipped and which; refuse under ``--strict``.

    Raises:
        TraceReadError: ``strict`` and at least one line could not be read (exit 2).
    """
    if not errors:
        return
    from groundtrace.analyzer._unreadable import refuse_unreadable, skipped_lines

    if strict:
        refuse_unreadable(errors)
    err_console.print(f"[yellow]warning:[/] {escape(skipped_lines(errors))}", highlight=False)


def read_error_rows(errors: Sequence[TraceReadError]) -> list[dict[str, object]]:
    """The unreadable lines as a command's JSON lists them (``read_errors``)."""
    return [{"path": e.path, "line": e.line, "field": e.field, "message": e.reason} for e in errors]


def nothing_read(what: str, errors: Sequence[TraceReadError]) -> None:
    """Say on stderr that no ``what`` (``trace``, ``span``) could be read from the input."""
    err_console.print(
        f"[bold red]error:[/] no {what} could be read from the input ({len(errors)} read error(s))",
        markup=True,
        highlight=False,
    )
