"""Options generated from a config record: names, types, defaults and help from its fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import pytest
import typer
from typer.testing import CliRunner

from groundtrace.analyzer.cli._fields import field_help, record_options
from groundtrace.analyzer.cli._options import fields_as_options, uses
from groundtrace.analyzer.errors import ConfigError


class _Paint(msgspec.Struct, frozen=True, kw_only=True):
    """A record of a domain the repository does not contain.

    Attributes:
        walls: the walls to paint, in this order (at least one).
        colour: ``red`` or ``blue``.
        coats: coats of paint (>= 1; see :func:`~some.module.coat`).
        gloss: a gloss level in [0, 1] (None: the shop's).
        finish: ``matte`` or ``satin`` (None: as the wall was).
        primer: prime the walls first.
        note: free text
            continued on a second line.
        layers: layer names (repeatable).
        tints: tint name -> its share of the paint.
    """

    walls: Annotated[tuple[str, ...], msgspec.Meta(min_length=1)]
    colour: Annotated[Literal["red", "blue"], msgspec.Meta(extra={"option": "--color"})] = "red"
    coats: int = 2
    gloss: float | None = None
    finish: Literal["matte", "satin"] | None = None
    primer: bool = False
    note: str = ""
    layers: tuple[str, ...] = ()
    tints: Annotated[dict[str, str], msgspec.Meta(extra={"option": "--tint"})] = {}


PAINT = record_options(_Paint, argument="walls")


def _app(got: list[_Paint]) -> typer.Typer:
    @uses(PAINT)
    def paint(out: Annotated[str, typer.Option()] = "o", *, config: _Paint) -> None:
        if config.coats < 1:
            with fields_as_options(PAINT.option_names):
                raise ConfigError("must be >= 1", field="coats")
        got.append(config)

    app = typer.Typer()
    app.command("paint")(paint)
    app.command("other")(lambda: None)
    return app


def test_the_command_receives_the_record_built_from_the_options_given() -> None:
    got: list[_Paint] = []
    runner = CliRunner()
    args = ["paint", "north", "south", "--color", "blue", "--coats", "3", "--gloss", "0.5",
            "--finish", "satin", "--primer", "--note", "x", "--layers", "a", "--layers",
            "b", "--tint", "ochre=0.2", "--tint", "umber=a=b"]  # fmt: skip
    assert runner.invoke(_app(got), args).exit_code == 0
    assert runner.invoke(_app(got), ["paint", "east"]).exit_code == 0
    assert got == [
        _Paint(walls=("north", "south"), colour="blue", coats=3, gloss=0.5, finish="satin",
               primer=True, note="x", layers=("a", "b"), tints={"ochre": "0.2", "umber": "a=b"}),
        _Paint(walls=("east",)),
    ]  # fmt: skip


def test_names_choices_defaults_and_help_come_from_the_record() -> None:
    runner = CliRunner()
    shown = runner.invoke(_app([]), ["paint", "--help"], env={"COLUMNS": "300"}).output
    for text in ("--color", "red|blue", "[default: red]", "--coats", "[default: 2]",
                 "--primer", "--no-primer", "matte|satin", "walls...",
                 "Coats of paint (>= 1; see coat).",
                 "A gloss level in [0, 1] (default: the shop's).",
                 "Free text continued on a second line.", "red or blue.", "--tint",
                 "Tint name -> its share of the paint. NAME=VALUE, repeatable."):  # fmt: skip
        assert text in shown, text
    assert "--colour" not in shown and "--walls" not in shown and "--tints" not in shown
    bad = runner.invoke(_app([]), ["paint", "w", "--color", "green"])
    assert bad.exit_code == 2 and "green" in bad.output
    assert runner.invoke(_app([]), ["paint", "--coats", "1"]).exit_code == 2  # WALLS required


def test_a_bad_field_is_named_by_its_option() -> None:
    result = CliRunner().invoke(_app([]), ["paint", "w", "--coats", "0"], catch_exceptions=True)
    assert isinstance(result.exception, ConfigError)
    assert result.exception.field == "--coats"
    assert PAINT.option_names["walls"] == "WALLS" and PAINT.option_names["colour"] == "--color"


def test_a_field_left_out_keeps_its_default_and_a_declared_one_its_form() -> None:
    group = record_options(
        _Paint, argument="walls", left_out=("note", "layers"),
        declared={"coats": (Annotated[str, typer.Option("--coat-count")], int)},
    )  # fmt: skip
    got: list[_Paint] = []

    @uses(group)
    def paint(*, config: _Paint) -> None:
        got.append(config)

    app = typer.Typer()
    app.command("paint")(paint)
    app.command("other")(lambda: None)
    runner = CliRunner()
    assert runner.invoke(app, ["paint", "w", "--coat-count", "4"]).exit_code == 0
    assert runner.invoke(app, ["paint", "w", "--note", "x"]).exit_code == 2
    assert got == [_Paint(walls=("w",), coats=4)]


def test_a_record_the_generator_cannot_offer_fails_when_declared() -> None:
    class Loose(msgspec.Struct):
        """Attributes:
        mapping: a mapping.
        """

        mapping: dict[str, int] = {}

    class Undocumented(msgspec.Struct):
        """No attributes section."""

        size: int = 1

    with pytest.raises(TypeError, match="not offered as an option"):
        record_options(Loose)
    with pytest.raises(TypeError, match="describes no field size"):
        field_help(Undocumented)
    with pytest.raises(TypeError, match="has no field shine"):
        record_options(_Paint, left_out=("shine",))


#: The options of each record-backed command, as they were spelled out by hand before the
#: generator (``interventions`` gained ``--timeout``, its record's field): a renamed record
#: field would rename an option, and this test would say so.
PINNED = {
    ("paths",): "--out --cases --tools-config --format --cases-format --quote-threshold "
    "--resamples --seed --strict --fail-on-failure --json",
    ("judge", "validate"): "--judge --model --rubric --threshold --profile --gold --dimension "
    "--label-field --filter --sample --stratify --no-stratify --sample-seed --concurrency "
    "--timeout --judge-seed --max-tokens --out --json",
    ("judge", "check"): "--record --judge --model --rubric --threshold --profile --judge-seed "
    "--json",
    ("judge", "run"): "--out --judge --model --rubric --threshold --profile --cases --strict "
    "--concurrency --timeout --judge-seed --max-tokens --json",
    ("gate", "run"): "--baseline --candidate --cases --profile --judge --judge-record --junit "
    "--strict --tools-config --out --json",
    ("interventions",): "--out --cases --pool-dataset --replay --endpoint --model "
    "--replay-kwarg --operators --limit --timeout --seed --similarity --relevance "
    "--recompute-original --no-recompute-original --strict --concurrency --json",
    ("audit", "run"): "--out --sources --questions --retriever --answers --traces --endpoint "
    "--answerer --model --judge --judge-model --validation --concurrency --timeout "
    "--retrieval --json",
    ("attribution",): "--model-path --endpoint --endpoint-model --method --max-passes "
    "--n-ablations --seed --threads --n-ctx --replay --replay-kwarg --out --json "
    "--limit --timeout --endpoint-form",  # fields added since, by their record
}
#: The option groups' options (tested in test_cli_options.py), left out of :data:`PINNED`.
GROUPS = set(
    "--write-back --otlp-endpoint --phoenix-url --executor --ray-address --ray-workers "
    "--call-profile --rate-limit --max-calls --max-cost --prices --estimate --no-estimate".split()
)


@pytest.mark.parametrize("path", sorted(PINNED), ids=" ".join)
def test_each_record_backed_command_keeps_its_option_names(path: tuple[str, ...]) -> None:
    from groundtrace.analyzer.cli import build_app

    command: Any = typer.main.get_command(build_app())
    for name in path:
        command = command.get_command(None, name)
    shown = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o[:2] == "--"}
    assert shown - GROUPS == set(PINNED[path].split())


def test_a_pair_that_is_not_name_equals_value_is_named_by_its_option() -> None:
    for given in ("ochre", "=0.2"):
        result = CliRunner().invoke(_app([]), ["paint", "w", "--tint", given])
        assert isinstance(result.exception, ConfigError), given
        assert result.exception.field == "--tint"
        assert f"expected NAME=VALUE, got {given!r}" in str(result.exception)


def test_analyze_names_a_field_by_the_option_its_record_names() -> None:
    from groundtrace.analyzer.cli._fields import override_options

    group = override_options(_Paint, reserved=("note",))
    assert group.option_names["colour"] == "--color"
    assert group.option_names["tints"] == "--tint"
    assert group.option_names["walls"] == "--walls" and "note" not in group.option_names
    given = {"colour": None, "tints": ["ochre=0.2"], "coats": None, "walls": None}
    assert group.build(given) == {"tints": {"ochre": "0.2"}}


def test_two_fields_of_one_option_are_refused_or_left_to_the_file() -> None:
    from groundtrace.analyzer.cli._fields import override_options

    class Clash(msgspec.Struct, kw_only=True):
        """Attributes:
        shade: a shade.
        tone: a tone, spelled as the shade.
        target: where it goes, spelled as the command's own --out.
        """

        shade: int = 1
        tone: Annotated[int, msgspec.Meta(extra={"option": "--shade"})] = 2
        target: Annotated[str, msgspec.Meta(extra={"option": "--out"})] = "t"

    with pytest.raises(TypeError, match="two fields of one option --shade"):
        record_options(Clash)
    group = override_options(Clash, reserved=("out",))
    assert dict(group.option_names) == {"shade": "--shade"}  # tone, target: the file's
