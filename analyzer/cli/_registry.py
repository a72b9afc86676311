"""The table of command modules and the one way they are added to the root app.

Every command module exposes ``register(app)`` and imports at module level only typer, rich and
the standard library; what a command needs is imported in its body, when it runs, so
``groundtrace --help`` loads no analysis stack.
"""

from __future__ import annotations

from typing import Final, Protocol

import typer

from . import _audit, _collect, _demo, _gate, _interventions, _judge, _paths, _traces

__all__ = ["COMMANDS", "CommandModule", "build_app"]


class CommandModule(Protocol):
    """What a command module provides."""

    def register(self, app: typer.Typer) -> None:
        """Add this module's command or command group to ``app``."""


#: The command modules, in the order ``groundtrace --help`` lists them.
COMMANDS: Final[tuple[CommandModule, ...]] = (
    _gate,
    _collect,
    _judge,
    _demo,
    _traces,
    _paths,
    _interventions,
    _audit,
)


def build_app() -> typer.Typer:
    """A new root app with every command registered."""
    app = typer.Typer(
        name="groundtrace",
        help="Trace RAG services and agents, then explain why they answered what they did.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for module in COMMANDS:
        module.register(app)
    return app
