"""The ``groundtrace`` command line: a thin layer over the public API.

Each command group lives in its own private module and is registered here. Errors raised on
purpose (:class:`groundtrace.analyzer.errors.GroundtraceError`) become a one-line message and
the error's exit code, never a traceback.

Usage::

    groundtrace demo --model lexical --questions 20 --out runs/demo
    groundtrace traces summary runs/demo/traces
"""

from __future__ import annotations

from ._app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    from ._registry import register_all

    register_all()
    app(prog_name="groundtrace")
