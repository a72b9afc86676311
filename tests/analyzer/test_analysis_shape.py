"""Every built-in analysis has the one public shape, and its table is what the CLI sees.

Each analysis package exposes the same public names (``Config``, ``plan``, ``run``,
``write_report``, ``reading``, ``ANALYSIS``), its ``ANALYSIS`` record ties exactly those names
together, and every field of its config record is documented where users read it.
"""

from __future__ import annotations

import importlib
import warnings

import msgspec
import pytest

from groundtrace.analyzer import Analysis, Plan, analyses, get_analysis, register_analysis
from groundtrace.analyzer.errors import ConfigError

BUILT_IN = ("audit", "gate", "interventions", "judge", "paths")
SHAPE = ("ANALYSIS", "Config", "plan", "run", "write_report", "reading")


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_package_exposes_the_same_public_names(name: str) -> None:
    package = importlib.import_module(f"groundtrace.analyzer.{name}")
    assert set(SHAPE) <= set(package.__all__)
    record = get_analysis(name)
    assert isinstance(record, Analysis) and record is package.ANALYSIS
    assert record.name == name and record.title
    assert record.config is package.Config
    assert (record.plan, record.run) == (package.plan, package.run)
    assert (record.write_report, record.reading) == (package.write_report, package.reading)
    assert issubclass(record.config, msgspec.Struct)


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_config_field_is_documented(name: str) -> None:
    """By the record's docstring, a shared record's it inherits, or a shared field type's
    description (``groundtrace.analyzer._settings``): what its options' help is."""
    from groundtrace.analyzer.cli._fields import field_help

    config = get_analysis(name).config
    helps = field_help(config)  # TypeError naming a field none of them describes
    missing = [f for f in config.__struct_fields__ if not helps.get(f)]
    assert not missing, f"{name}.Config documents no {missing}"


def test_a_plan_is_a_sequence_of_its_units_with_or_without_slots() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Loose(Plan[int]):
        units: tuple[int, ...]
        note: str = ""

    @dataclass(frozen=True, slots=True)
    class Slotted(Plan[int]):
        units: tuple[int, ...]

    for plan in (Loose((1, 2, 3), "n"), Slotted((1, 2, 3))):
        assert (len(plan), plan[1], list(plan), tuple(plan[:2])) == (3, 2, [1, 2, 3], (1, 2))


def test_the_table_lists_the_built_ins_and_refuses_unknown_names() -> None:
    assert set(BUILT_IN) <= set(analyses())
    with pytest.raises(ConfigError, match="no analysis 'nosuch'; known: attribution, audit"):
        get_analysis("nosuch")


def test_a_registered_analysis_is_found_and_a_bad_name_is_refused() -> None:
    paths = get_analysis("paths")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mine = Analysis(**{f: getattr(paths, f) for f in paths.__slots__} | {"name": "mine"})
    register_analysis(mine)
    try:
        assert get_analysis("mine") is mine and "mine" in analyses()
    finally:
        from groundtrace.analyzer import _analysis

        _analysis._REGISTERED.pop("mine")
    for bad in ("", "Mine", "9lives", "a b"):
        with pytest.raises(ConfigError, match="not a lower-case word"):
            register_analysis(
                Analysis(**{f: getattr(paths, f) for f in paths.__slots__} | {"name": bad})
            )
