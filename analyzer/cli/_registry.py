"""The table of command modules and the one way they are added to the root app.

Every command module exposes ``register(app)`` and imports at module level only typer, rich and
the standard library; what a command needs is imported in its body, when it runs, so
``groundtrace --help`` loads no analysis stack.

Help text is plain text: typer renders it as rich markup, which would take
``'groundtrace[ray]'`` or ``[models.NAME]`` for a style tag and drop it, so the root group
escapes every command's and option's help once, when the command tree is built.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

import typer
from rich.markup import escape
from typer.core import TyperGroup

from . import (
    _analyze,
    _audit,
    _collect,
    _demo,
    _gate,
    _interventions,
    _judge,
    _monitor,
    _paths,
    _traces,
)
from ._app import root_options

__all__ = ["COMMANDS", "CommandModule", "build_app"]


class CommandModule(Protocol):
    """What a command module provides."""

    def register(self, app: typer.Typer) -> None:
        """Add this module's command or command group to ``app``."""


#: The command modules, in the order ``groundtrace --help`` lists them.
COMMANDS: Final[tuple[CommandModule, ...]] = (
    _gate,
    _collect,
    _monitor,
    _judge,
    _demo,
    _traces,
    _paths,
    _interventions,
    _audit,
    _analyze,
)


def _escape_help(command: Any) -> None:
    """Escape the help of ``command``, its parameters and its subcommands (rich markup)."""
    for name in ("help", "short_help", "epilog"):
        text = getattr(command, name, None)
        if isinstance(text, str):
            setattr(command, name, escape(text))
    for param in command.params:
        if isinstance(getattr(param, "help", None), str):
            param.help = escape(param.help)
    for sub in getattr(command, "commands", {}).values():
        _escape_help(sub)


class _PlainHelpGroup(TyperGroup):
    """The root group: help text shows as written, brackets included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _escape_help(self)  # a new tree each time typer builds one: escaped exactly once


def build_app() -> typer.Typer:
    """A new root app with every command registered."""
    app = typer.Typer(
        name="groundtrace",
        cls=_PlainHelpGroup,
        help="Trace RAG services and agents, then explain why they answered what they did.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        callback=root_options,
    )
    for module in COMMANDS:
        module.register(app)
    return app
