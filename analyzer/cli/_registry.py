"""The table of commands and the root group that loads each command when it is used.

Each row names a command, the module that registers it (``register(app)``) and the summary
``groundtrace --help`` lists it with. The root group imports a command's module only when that
command runs or shows its help (click's "lazily loading subcommands" pattern), so
``groundtrace --help`` loads no command module, and a command may build its options from its
analysis's config record (:mod:`._fields`) at import. A test keeps each summary equal to the
first paragraph of its command's help.

Help text is plain text: typer renders it as rich markup, which would take
``'groundtrace[ray]'`` or ``[models.NAME]`` for a style tag and drop it, so the root group
escapes every command's and option's help once, when it loads the command.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Final, Protocol

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from groundtrace.analyzer._extras import missing_extra

from ._app import err_console, root_options

__all__ = [
    "COMMANDS",
    "Command",
    "CommandModule",
    "ListingGroup",
    "build_app",
    "escape_help",
    "load_command",
]


class CommandModule(Protocol):
    """What a command module provides."""

    def register(self, app: typer.Typer) -> None:
        """Add this module's command or command group to ``app``."""


@dataclass(frozen=True, slots=True)
class Command:
    """A row of the command table.

    Attributes:
        name: the command's name (``groundtrace NAME``).
        module: its module in this package, which registers it (:class:`CommandModule`).
        summary: the line ``groundtrace --help`` lists it with (its help's first paragraph).
    """

    name: str
    module: str
    summary: str


#: The commands, in the order ``groundtrace --help`` lists them.
COMMANDS: Final[tuple[Command, ...]] = (
    Command("demo", "_demo",
            "Run the instrumented HotpotQA RAG example, capture its traces and summarise them."),
    Command("paths", "_paths", "Did the answers really come from what was read? Text and path "
            "channels side by side."),
    Command("interventions", "_interventions",
            "Replay each trace with evidence removed, replaced, duplicated or zeroed."),
    Command("attribution", "_attribution", "Which evidence caused each answer: the "
            "log-probability of the recorded answer when each evidence item is removed from "
            "the recorded prompt."),
    Command("analyze", "_analyze",
            "Run any analysis (built-in or a plugin's) from its config file; write its report."),
    Command("gate", "_gate", "Release gate: promote / manual review / block / not evaluable."),
    Command("collect", "_collect",
            "Bring traces in: an OTLP/HTTP receiver, or a pull from Arize Phoenix."),
    Command("monitor", "_monitor", "Online evaluation: rules run on a sample of live traces, "
            "with windows and alerts."),
    Command("judge", "_judge", "LLM-judge checks and judge meta-evaluation (validate before a "
            "judge may gate)."),
    Command("traces", "_traces", "Read trace files (OTLP-JSON lines, OTLP protobuf, "
            "trace-model JSON lines, gzip, directories, '-' for stdin) or chat transcripts, and "
            "summarise or convert them to the trace model, or send them to an OTLP endpoint."),
    Command("audit", "_audit",
            "Multi-source audit: same question, different sources, different answers."),
)  # fmt: skip


def escape_help(command: Any) -> None:
    """Escape the help of ``command``, its parameters and its subcommands (rich markup)."""
    for name in ("help", "short_help", "epilog"):
        text = getattr(command, name, None)
        if isinstance(text, str):
            setattr(command, name, escape(text))
    for param in command.params:
        if isinstance(getattr(param, "help", None), str):
            param.help = escape(param.help)
    for sub in getattr(command, "commands", {}).values():
        escape_help(sub)


def load_command(row: Command) -> Any:
    """The command of ``row``: its module imported and registered on an app of its own
    (help as written, not escaped)."""
    module: CommandModule = importlib.import_module(f"{__package__}.{row.module}")
    app = typer.Typer()
    module.register(app)
    return typer.main.get_group(app).commands[row.name]


class ListingGroup(TyperGroup):
    """A group of commands loaded when used: while it formats its own ``--help``,
    :attr:`listing` is set, and ``get_command`` answers with a summary instead of loading."""

    listing = False

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


class _LazyGroup(ListingGroup):
    """The root group: commands from the table, each loaded when used; help shown as written,
    brackets included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        escape_help(self)  # a new tree each time typer builds one: escaped exactly once
        self._rows = {row.name: row for row in COMMANDS}
        self._loaded: dict[str, Any] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self._rows)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        row = self._rows.get(cmd_name)
        if row is None:
            return None
        if self.listing and cmd_name not in self._loaded:  # the summary is all --help shows
            return TyperCommand(cmd_name, help=escape(row.summary))
        if cmd_name not in self._loaded:
            try:
                command = load_command(row)
            except ModuleNotFoundError as exc:  # a command whose options need a missing extra
                error = missing_extra(exc)
                if error is None:
                    raise
                err_console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
                raise typer.Exit(error.exit_code) from None
            escape_help(command)
            self._loaded[cmd_name] = command
        return self._loaded[cmd_name]


def build_app() -> typer.Typer:
    """A new root app whose group loads each command of :data:`COMMANDS` when it is used."""
    return typer.Typer(
        name="groundtrace",
        cls=_LazyGroup,
        help="Trace RAG services and agents, then explain why they answered what they did.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        callback=root_options,
    )
