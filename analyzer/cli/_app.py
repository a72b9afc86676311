"""The consoles and the error handling shared by every command."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from groundtrace.analyzer._extras import missing_extra

__all__ = ["console", "err_console", "handle_errors", "print_reading", "root_options"]

#: Width of tables written to a log or a pipe (rich assumes 80 there): the widest table, the
#: evidence interventions', is 104 columns. ``COLUMNS`` still decides when it is set.
_PLAIN_WIDTH = 120
_width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else _PLAIN_WIDTH
console = Console(soft_wrap=True, width=_width)
err_console = Console(stderr=True, soft_wrap=True)


def print_reading(text: str) -> None:
    """Print a result's plain-language reading under its table."""
    console.print(f"[bold]Reading.[/] {escape(text)}\n", highlight=False)


def _print_version(value: bool) -> None:
    """Print groundtrace's version (``groundtrace.sdk.__version__``, its one source) and exit."""
    if value:
        from groundtrace.sdk import __version__

        typer.echo(f"groundtrace {__version__}")
        raise typer.Exit()


def root_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print groundtrace's version and exit.",
        ),
    ] = False,
) -> None:
    """The options of ``groundtrace`` itself, before any command."""


P = ParamSpec("P")
R = TypeVar("R")


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map :class:`GroundtraceError` (and a missing extra) to a clear message and exit code."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from groundtrace.analyzer.errors import GroundtraceError

        try:
            return func(*args, **kwargs)
        except ModuleNotFoundError as exc:
            error = missing_extra(exc)
            if error is None:
                raise
            message, code = str(error), error.exit_code
        except GroundtraceError as exc:
            message, code = str(exc), exc.exit_code
        err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
        raise typer.Exit(code) from None

    return wrapper
