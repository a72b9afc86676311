"""The option groups: declared once, shown by each command using them, handed over as records."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.cli._budget import CallOptions
from groundtrace.analyzer.cli._executor import ExecutorName, ExecutorOptions
from groundtrace.analyzer.cli._options import uses, without
from groundtrace.analyzer.cli._writeback import WriteBack, WriteBackOptions
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.writeback import Linked

#: The commands and the groups each takes (``without`` is left out of judge validate).
USERS: dict[tuple[str, ...], tuple[type[Any], ...]] = {
    ("interventions",): (WriteBackOptions, ExecutorOptions, CallOptions),
    ("audit", "run"): (ExecutorOptions, CallOptions),
    ("judge", "run"): (WriteBackOptions, ExecutorOptions, CallOptions),
    ("paths",): (WriteBackOptions, ExecutorOptions),
    ("gate", "run"): (WriteBackOptions, ExecutorOptions),
    ("analyze", "paths"): (WriteBackOptions, ExecutorOptions),
}


def _command(path: tuple[str, ...]) -> Any:
    command: Any = typer.main.get_command(build_app())
    for name in path:
        command = command.get_command(None, name)  # the root's and analyze's load when asked
    return command


def _fields(group: type[Any]) -> list[str]:
    return [f.name for f in dataclasses.fields(group)]


@pytest.mark.parametrize("path", sorted(USERS), ids=" ".join)
def test_each_command_shows_every_option_of_its_groups_in_declared_order(
    path: tuple[str, ...],
) -> None:
    names = [p.name for p in _command(path).params]
    for group in USERS[path]:
        fields = _fields(group)
        start = names.index(fields[0])
        assert names[start : start + len(fields)] == fields, (path, group.__name__)


def test_every_command_of_a_group_shows_the_same_option() -> None:
    seen: dict[str, tuple[Any, ...]] = {}
    for path, groups in USERS.items():
        for param in _command(path).params:
            if any(param.name in _fields(g) for g in groups):
                shown = (param.opts, param.default, param.envvar, param.help)
                assert seen.setdefault(param.name, shown) == shown, (path, param.name)
    assert set(seen) == {n for g in (WriteBackOptions, ExecutorOptions, CallOptions)
                         for n in _fields(g)}  # fmt: skip


def test_judge_validate_offers_the_call_options_but_the_ceilings() -> None:
    names = [p.name for p in _command(("judge", "validate")).params]
    assert {"call_profile", "rate_limit", "prices", "estimate"} <= set(names)
    assert not {"max_calls", "max_cost"} & set(names)
    result = CliRunner().invoke(
        build_app(), ["judge", "validate", "--gold", "g.jsonl", "--out", "o", "--max-calls", "3"]
    )
    assert result.exit_code == 2
    assert "No such option" in result.output


@dataclass(frozen=True, slots=True, kw_only=True)
class _Colour:
    """A group of a domain the repository does not contain."""

    hue: Annotated[int, typer.Option(help="Hue in degrees.")] = 120
    glossy: Annotated[bool, typer.Option(help="Glossy finish.")] = False


def _app(command: Any) -> typer.Typer:
    app = typer.Typer()
    app.command("paint")(command)
    app.command("other")(lambda: None)  # a group, so "paint" is named on the command line
    return app


def test_a_command_receives_one_record_per_group_built_from_the_values_given() -> None:
    got: list[tuple[str, _Colour, ExecutorOptions]] = []

    @uses(_Colour, ExecutorOptions)
    def paint(wall: str, *, colour: _Colour, executor: ExecutorOptions) -> None:
        got.append((wall, colour, executor))

    runner = CliRunner()
    result = runner.invoke(_app(paint), ["paint", "north", "--hue", "7", "--ray-workers", "3"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(_app(paint), ["paint", "south"])
    assert result.exit_code == 0, result.output
    assert got == [
        ("north", _Colour(hue=7), ExecutorOptions(ray_workers=3)),
        ("south", _Colour(), ExecutorOptions()),
    ]
    shown = runner.invoke(_app(paint), ["paint", "--help"], env={"COLUMNS": "200"}).output
    assert "Hue in degrees." in shown and "--glossy" in shown and "--executor" in shown


def test_a_group_offered_without_an_option_keeps_its_default() -> None:
    got: list[_Colour] = []

    @uses(without(_Colour, "glossy"))
    def paint(colour: _Colour) -> None:
        got.append(colour)

    runner = CliRunner()
    assert runner.invoke(_app(paint), ["paint", "--hue", "9"]).exit_code == 0
    assert runner.invoke(_app(paint), ["paint", "--glossy"]).exit_code == 2
    assert got == [_Colour(hue=9)]


def test_a_badly_declared_command_fails_when_it_is_declared() -> None:
    def no_parameter(wall: str) -> None: ...

    def twice(hue: int = 0, *, colour: _Colour) -> None: ...

    with pytest.raises(TypeError, match="no parameter typed _Colour"):
        uses(_Colour)(no_parameter)
    with pytest.raises(TypeError, match="declared twice: hue"):
        uses(_Colour)(twice)
    with pytest.raises(TypeError, match="_Colour has no option shine"):
        without(_Colour, "shine")


def test_the_executor_options_open_the_executor_they_name() -> None:
    with ExecutorOptions().open(3) as runner:
        assert isinstance(runner, LocalExecutor)
        assert runner.concurrency == 3
    with (
        pytest.raises(ConfigError, match="--ray-address needs --executor ray"),
        ExecutorOptions(executor=ExecutorName.LOCAL, ray_address="ray://x:1").open(1),
    ):
        pass


def test_the_call_options_resolve_to_the_settings(tmp_path: Path) -> None:
    from groundtrace.analyzer import judge
    from groundtrace.analyzer.cli._budget import with_concurrency

    settings = CallOptions(max_calls=5, rate_limit=2.0).settings()
    assert settings.budget is not None and settings.budget.max_calls == 5
    assert settings.rate_limit("http://127.0.0.1:1/v1") == 2.0
    assert CallOptions().settings(None).budget is None
    # the options are the record's call fields: set over them, resolved as the record's
    config = CallOptions(max_calls=5, rate_limit=2.0).over(judge.Config(concurrency=3))
    assert (config.max_calls, config.rate_limit, config.in_flight()) == (5, 2.0, 3)
    assert CallOptions(max_calls=5).settings(judge.Config(max_cost=None)).budget is not None
    with pytest.raises(ConfigError, match="concurrency must be >= 1") as bad:
        with_concurrency(judge.Config(), 0)
    assert bad.value.field == "--concurrency"
    with pytest.raises(ConfigError, match="rate_limit must be > 0") as bad:
        CallOptions(rate_limit=0.0).over(judge.Config())
    assert bad.value.field == "--rate-limit"
    with pytest.raises(ConfigError):
        CallOptions(call_profile=tmp_path / "absent.toml").settings(None)


def test_without_write_back_nothing_is_linked_or_sent() -> None:
    def linked() -> Linked:
        raise AssertionError("the verdicts are made only for --write-back")

    options = WriteBackOptions()
    assert not options.requested
    options.send(linked)
    assert WriteBackOptions(write_back_to=WriteBack.OTLP).requested
