"""Evidence roles per item and in aggregate (SPEC 4.2.3)."""

from __future__ import annotations

import pytest

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.interventions import Role
from groundtrace.analyzer.interventions._axes import Gold, Outcome
from groundtrace.analyzer.interventions._roles import (
    ItemInterventions,
    RoleThresholds,
    aggregate_roles,
    assign_roles,
)
from groundtrace.analyzer.stats import StatsSettings

TITLES = {"g": "Gold page", "x": "Other page"}
GOLD = Gold("Paris", frozenset({"Gold page"}))
STATS = StatsSettings(n_resamples=1000, seed=3)


def _o(answer: str, c: float | None = 0.8, used: tuple[str, ...] = ("g",)) -> Outcome:
    return Outcome(answer, c, frozenset(used), TITLES)


def test_constructive_when_removal_lowers_correctness() -> None:
    item = ItemInterventions(GOLD, _o("Paris"), remove=_o("Rome", used=("x",)))
    r = assign_roles(item)
    assert Role.CONSTRUCTIVE in r.roles and Role.DISTRACTING not in r.roles
    assert Role.REDUNDANT not in r.roles


def test_distracting_when_replacement_raises_grounding() -> None:
    item = ItemInterventions(GOLD, _o("Paris", used=("x",)), replace=_o("Paris", used=("g",)))
    r = assign_roles(item)
    assert r.roles == {Role.DISTRACTING}
    assert Role.REDUNDANT in r.not_evaluable  # no REMOVE trace


def test_corrective_requires_fallback_to_zero_answer() -> None:
    item = ItemInterventions(
        GOLD, _o("Paris"), remove=_o("Lyon", used=()), zero=_o("Lyon", used=())
    )
    assert Role.CORRECTIVE in assign_roles(item).roles
    other = ItemInterventions(
        GOLD, _o("Paris"), remove=_o("Marseille", used=()), zero=_o("Lyon", used=())
    )
    assert Role.CORRECTIVE not in assign_roles(other).roles
    zero_right = ItemInterventions(
        GOLD, _o("Paris"), remove=_o("Paris", used=()), zero=_o("Paris", used=())
    )
    assert Role.CORRECTIVE not in assign_roles(zero_right).roles
    no_zero = ItemInterventions(GOLD, _o("Paris"), remove=_o("Lyon"))
    assert "ZERO" in assign_roles(no_zero).not_evaluable[Role.CORRECTIVE]


def test_redundant_when_nothing_moves_and_divergence_small() -> None:
    item = ItemInterventions(GOLD, _o("Paris", 0.8), remove=_o("Paris", 0.75))
    r = assign_roles(item)
    assert r.roles == {Role.REDUNDANT}  # D = 0.2 * 0.05 = 0.01 <= 0.1
    big = ItemInterventions(GOLD, _o("Paris", 0.8, ("g",)), remove=_o("Paris", 0.8, ("g", "x")))
    assert Role.REDUNDANT not in assign_roles(big).roles  # D = 0.5 * 0.5 = 0.25 > 0.1
    no_conf = ItemInterventions(GOLD, _o("Paris", None), remove=_o("Paris", None))
    assert Role.REDUNDANT in assign_roles(no_conf).not_evaluable


def test_confidence_distorting_needs_same_answer_and_theta() -> None:
    item = ItemInterventions(GOLD, _o("Paris", 0.9), duplicate=_o("paris.", 0.5))
    assert Role.CONFIDENCE_DISTORTING in assign_roles(item).roles
    small = ItemInterventions(GOLD, _o("Paris", 0.9), duplicate=_o("Paris", 0.8))
    assert Role.CONFIDENCE_DISTORTING not in assign_roles(small).roles
    changed = ItemInterventions(GOLD, _o("Paris", 0.9), duplicate=_o("Rome", 0.2))
    assert Role.CONFIDENCE_DISTORTING not in assign_roles(changed).roles
    loose = RoleThresholds(confidence_theta=0.1)
    assert Role.CONFIDENCE_DISTORTING in assign_roles(small, loose).roles


def test_aggregate_constructive_needs_ci_excluding_zero() -> None:
    hurt = ItemInterventions(GOLD, _o("Paris"), remove=_o("Rome", used=("x",)))
    same = ItemInterventions(GOLD, _o("Paris"), remove=_o("Paris"))
    strong = aggregate_roles([hurt] * 12 + [same] * 8, stats=STATS)
    assert strong[Role.CONSTRUCTIVE].asserted
    assert not strong[Role.DISTRACTING].asserted
    assert strong[Role.CONSTRUCTIVE].rate.mean == pytest.approx(0.6)
    weak = aggregate_roles([hurt] * 1 + [same] * 19, stats=STATS)
    assert not weak[Role.CONSTRUCTIVE].asserted  # one item: CI of mean Δ includes 0
    assert weak[Role.CONSTRUCTIVE].rate.mean == pytest.approx(0.05)


def test_aggregate_redundant_and_not_evaluable_rates() -> None:
    same = ItemInterventions(GOLD, _o("Paris", 0.8), remove=_o("Paris", 0.8))
    out = aggregate_roles([same] * 10, stats=STATS)
    assert out[Role.REDUNDANT].asserted
    assert not out[Role.CONSTRUCTIVE].asserted
    corrective = out[Role.CORRECTIVE]
    assert not corrective.asserted and corrective.rate.n == 0  # no ZERO trace anywhere
    assert to_builtins(corrective)["rate"]["mean"] is None


def test_thresholds_validated() -> None:
    with pytest.raises(ConfigError):
        RoleThresholds(grounding_change=0.0)
