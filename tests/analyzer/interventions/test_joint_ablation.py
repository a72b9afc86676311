"""Joint ablation, synergy, strong complementarity and exact Shapley values (SPEC 4.2.4)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.interventions._joint import (
    JointItem,
    joint_support_pair,
    shapley_values,
    summarise_joint,
)
from groundtrace.analyzer.replay import ReplayChunk
from groundtrace.analyzer.stats import StatsSettings


def test_drops_and_synergy_hand_worked() -> None:
    item = JointItem(f1_full=1.0, f1_without_first=0.8, f1_without_second=0.9, f1_without_both=0.2)
    assert item.drop_first == pytest.approx(0.2)
    assert item.drop_second == pytest.approx(0.1)
    assert item.drop_joint == pytest.approx(0.8)
    assert item.synergy == pytest.approx(0.5)
    assert not item.strong_complementarity


def test_rates_hand_worked() -> None:
    items = [
        JointItem(1.0, 1.0, 1.0, 0.0),  # strong complementarity, synergy 1
        JointItem(1.0, 1.0, 1.0, 1.0),  # nothing moves, synergy 0
        JointItem(1.0, 0.5, 0.5, 0.0),  # additive, synergy 0
        JointItem(1.0, 0.0, 0.0, 0.0),  # each alone necessary, synergy -1
    ]
    s = summarise_joint(items, StatsSettings(n_resamples=500, seed=5))
    assert s.n == 4
    assert s.positive_synergy_rate.mean == pytest.approx(0.25)
    assert s.strong_complementarity_rate.mean == pytest.approx(0.25)
    assert s.mean_synergy.mean == pytest.approx(0.0)
    assert s.mean_drop_joint.mean == pytest.approx(0.75)
    assert s.mean_drop_first.mean == pytest.approx(0.375)
    assert to_builtins(s)["mean_synergy"]["seed"] == 5


def test_joint_support_pair_eligibility() -> None:
    r = [
        ReplayChunk("a", "A", rank=2),
        ReplayChunk("b", "B", rank=0),
        ReplayChunk("a2", "A", rank=1),
        ReplayChunk("x", "X", rank=3),
    ]
    pair = joint_support_pair(r, {"A", "B"})
    assert pair is not None and (pair[0].id, pair[1].id) == ("b", "a2")
    assert joint_support_pair(r, {"A", "Z"}) is None
    unranked = [ReplayChunk("x", "X"), ReplayChunk("a", "A"), ReplayChunk("b", "B", rank=0)]
    pair = joint_support_pair(unranked, {"A", "B"})  # a ranks by its position 1, after b
    assert pair is not None and (pair[0].id, pair[1].id) == ("b", "a")


def _value_table(
    players: list[str], weights: dict[str, float], bonus: float
) -> dict[frozenset[str], float]:
    table = {}
    for size in range(len(players) + 1):
        for subset in itertools.combinations(players, size):
            s = frozenset(subset)
            table[s] = sum(weights[p] for p in s) + (bonus if {"s1", "s2"} <= s else 0.0)
    return table


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_shapley_efficiency_and_symmetry(k: int) -> None:
    players = [f"s{i + 1}" for i in range(k)]
    weights = {p: 0.1 * (i + 1) for i, p in enumerate(players)}
    if k >= 3:
        weights["s3"] = weights["s1"]  # s1 and s3 play symmetric roles only when no bonus
    table = _value_table(players, weights, bonus=0.0)
    phi = shapley_values(players, table)
    total = table[frozenset(players)] - table[frozenset()]
    assert sum(phi.values()) == pytest.approx(total)
    for p in players:
        assert phi[p] == pytest.approx(weights[p])  # additive game: phi = own weight
    if k >= 3:
        assert phi["s1"] == pytest.approx(phi["s3"])


def test_shapley_splits_interaction_equally() -> None:
    table = _value_table(["s1", "s2", "s3"], {"s1": 0.0, "s2": 0.0, "s3": 0.2}, bonus=0.6)
    phi = shapley_values(["s1", "s2", "s3"], lambda s: table[s])
    assert phi == pytest.approx({"s1": 0.3, "s2": 0.3, "s3": 0.2})


def test_shapley_limits_fail_closed() -> None:
    with pytest.raises(InputError, match="k <= 5"):
        shapley_values([f"s{i}" for i in range(6)], lambda s: 0.0)
    with pytest.raises(InputError, match="missing"):
        shapley_values(["a", "b"], {frozenset(): 0.0, frozenset({"a"}): 1.0})


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(min_value=0, max_value=5),
    values=st.lists(
        st.floats(min_value=-1.0, max_value=1.0, allow_nan=False), min_size=32, max_size=32
    ),
)
def test_shapley_efficiency_holds_for_any_value_function(k: int, values: list[float]) -> None:
    players = [f"s{i}" for i in range(k)]
    subsets = [frozenset(p for j, p in enumerate(players) if m >> j & 1) for m in range(2**k)]
    table = dict(zip(subsets, values, strict=False))
    phi = shapley_values(players, table)
    assert sum(phi.values()) == pytest.approx(
        table[frozenset(players)] - table[frozenset()], abs=1e-9
    )
