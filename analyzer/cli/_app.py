"""The root Typer application and the shared error handling of every command."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from groundtrace.analyzer.errors import GroundtraceError

__all__ = ["app", "console", "err_console", "handle_errors"]

app = typer.Typer(
    name="groundtrace",
    help="Trace RAG services and agents, then explain why they answered what they did.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

P = ParamSpec("P")
R = TypeVar("R")


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map :class:`GroundtraceError` to a clear message and its exit code."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except GroundtraceError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(exc.exit_code) from None

    return wrapper
