"""The ``groundtrace`` command line: a thin layer over the public API.

Each command module registers its commands through one table
(:data:`groundtrace.analyzer.cli._registry.COMMANDS`) and imports what a command needs only
when that command runs. Errors raised on purpose
(:class:`groundtrace.analyzer.errors.GroundtraceError`) become a one-line message and the
error's exit code, never a traceback; so does a missing extra (exit 2, naming the extra to
install). This module imports no third-party package, so the entry point works on the SDK-only
install and says what to add.

Usage::

    groundtrace demo --model lexical --questions 20 --out runs/demo
    groundtrace traces summary runs/demo/traces
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from groundtrace.analyzer._extras import missing_extra

if TYPE_CHECKING:
    import typer

__all__ = ["build_app", "main"]


def build_app() -> typer.Typer:
    """The root Typer app with every command registered (needs the ``analyzer`` extra)."""
    from . import _registry

    return _registry.build_app()


def main() -> None:
    """Console-script entry point."""
    try:
        app = build_app()
    except ModuleNotFoundError as exc:
        error = missing_extra(exc)
        if error is None:
            raise
        print(f"groundtrace: {error}", file=sys.stderr)
        raise SystemExit(error.exit_code) from None
    app(prog_name="groundtrace")
