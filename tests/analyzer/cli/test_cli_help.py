"""Every command's --help shows its help text as written: brackets are not taken for markup."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.cli._registry import COMMANDS, load_command


def _walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


def _written() -> dict[tuple[str, ...], Any]:
    """The command tree with its help as the command modules wrote it (nothing escaped)."""
    app = build_app()
    app.info.cls = TyperGroup
    tree = dict(_walk(typer.main.get_command(app)))  # the root alone: its commands load lazily
    for row in COMMANDS:
        tree.update(_walk(load_command(row), (row.name,)))
    return tree


WRITTEN = _written()


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_some_help_has_brackets_that_rich_would_drop() -> None:
    texts = [p.help or "" for c in WRITTEN.values() for p in c.params]
    assert any("'groundtrace[ray]'" in t for t in texts)
    assert any("[models.NAME]" in t for t in texts)


@pytest.mark.parametrize("path", sorted(WRITTEN), ids=lambda p: " ".join(p) or "groundtrace")
def test_help_shows_every_option_help_as_written(path: tuple[str, ...]) -> None:
    # wide enough that no help line wraps inside rich's table
    result = CliRunner().invoke(build_app(), [*path, "--help"], env={"COLUMNS": "1000"})
    assert result.exit_code == 0, result.output
    shown = _flat(result.output)
    command = WRITTEN[path]
    for param in command.params:
        if param.help:
            assert _flat(param.help) in shown, (param.name, param.help)
    first = (command.help or "").strip().split("\n\n")[0]
    assert _flat(first) in shown, first
    subcommands = getattr(command, "commands", {}) if path else {
        row.name: WRITTEN[(row.name,)] for row in COMMANDS}  # fmt: skip
    for name, sub in subcommands.items():
        # a group lists each subcommand with the first line of its help
        summary = _flat(sub.short_help or (sub.help or "").strip().split("\n")[0])
        assert summary in shown, (name, summary)


@pytest.mark.parametrize("row", COMMANDS, ids=lambda row: row.name)
def test_the_table_lists_each_command_with_the_first_paragraph_of_its_help(row: Any) -> None:
    assert row.summary == _flat((WRITTEN[(row.name,)].help or "").strip().split("\n\n")[0])
