"""The declared public surface of stats, metrics and interventions resolves and is complete."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "groundtrace.analyzer.stats",
        "groundtrace.analyzer.metrics",
        "groundtrace.analyzer.interventions",
    ],
)
def test_all_names_resolve_and_are_public(module: str) -> None:
    mod = importlib.import_module(module)
    assert len(set(mod.__all__)) == len(mod.__all__)
    for name in mod.__all__:
        assert not name.startswith("_")
        assert getattr(mod, name) is not None
