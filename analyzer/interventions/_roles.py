"""Evidence roles from per-item intervention outcomes (SPEC 4.2.3).

Notation: Δ^op_k = U_k(tau) - U_k(tau~_op) for operator op in {REMOVE, REPLACE, DUPLICATE},
axis k in {corr, grnd, cal}; D^op the trace divergence; ZERO the no-evidence trace. The
thresholds are fields of :class:`RoleThresholds` (profile settings; defaults in brackets).

Per item (roles are not exclusive: an item can be constructive under REMOVE and distracting
under REPLACE):

=====================  ================================================  ====================
role                   per-item criterion                                needs
=====================  ================================================  ====================
constructive           for REMOVE or REPLACE: Δcorr >= t_corr [0.5] or   REMOVE or REPLACE
                       Δgrnd >= t_grnd [0.1] (removing / replacing it
                       lowers correctness or grounding)
corrective             ZERO answer wrong, original correct, and the      reference, ZERO,
                       REMOVE answer falls back to the ZERO answer (EM   REMOVE
                       or token F1 >= f_fallback [0.8] between them)
redundant              under REMOVE no axis moves (|Δcorr| < t_corr,     REMOVE, computable D
                       |Δgrnd| < t_grnd, |Δcal| < t_cal [0.1] when
                       computed) and D^REMOVE <= ε [0.1]
distracting            for REMOVE or REPLACE: Δcorr <= -t_corr or        REMOVE or REPLACE
                       Δgrnd <= -t_grnd (removing / replacing it
                       *raises* correctness or grounding)
confidence-distorting  for REMOVE or DUPLICATE: normalised answer        REMOVE or DUPLICATE,
                       unchanged and |c - c~| >= θ_c [0.2]               both confidences
=====================  ================================================  ====================

When what a role needs is absent the role is *not evaluable* for that item (recorded with
the reason), which is different from "not asserted".

Aggregate level (over items, paired bootstrap CI of :mod:`groundtrace.analyzer.stats`):

======================  =========================================================================
role                    asserted when
======================  =========================================================================
constructive            for some op in {REMOVE, REPLACE}, k in {corr, grnd}: CI of mean Δ^op_k > 0
distracting             for some op in {REMOVE, REPLACE}, k in {corr, grnd}: CI of mean Δ^op_k < 0
redundant               the CI of mean D^REMOVE lies below ε (the CI of ε - D excludes 0) and
                        no REMOVE axis has a mean Δ whose CI excludes 0
corrective              CI of the rate of corrective items (over evaluable items) excludes 0
confidence-distorting   CI of the rate of confidence-distorting items excludes 0
======================  =========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import msgspec
import numpy as np

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.metrics import normalise_answer, score_answer
from groundtrace.analyzer.stats import DeltaSummary, StatsSettings, summarise_deltas

from ._axes import AxisSettings, Comparison, Gold, Outcome, as_vector, compare

__all__ = [
    "AggregateRole",
    "ItemInterventions",
    "ItemRoles",
    "Role",
    "RoleThresholds",
    "aggregate_roles",
    "assign_roles",
]


#: Rounding allowance in threshold comparisons (0.9 - 0.8 must reach a threshold of 0.1).
_EPS = 1e-9


class Role(StrEnum):
    """Evidence roles of SPEC 4.2.3."""

    CONSTRUCTIVE = "constructive"
    CORRECTIVE = "corrective"
    REDUNDANT = "redundant"
    DISTRACTING = "distracting"
    CONFIDENCE_DISTORTING = "confidence-distorting"


@dataclass(frozen=True, slots=True)
class RoleThresholds:
    """Role thresholds of the profile (see the module docstring for where each is used).

    Attributes:
        correctness_change: t_corr, |Δcorr| at which correctness "moves" (binary axis:
            any flip).
        grounding_change: t_grnd, |Δgrnd| at which grounding moves.
        calibration_change: t_cal, |Δcal| at which calibration moves.
        redundancy_epsilon: ε, largest D^REMOVE of a redundant item.
        confidence_theta: θ_c, smallest |c - c~| of a confidence-distorting item.
        fallback_f1: token F1 at which the REMOVE answer counts as the ZERO answer.
    """

    correctness_change: float = 0.5
    grounding_change: float = 0.1
    calibration_change: float = 0.1
    redundancy_epsilon: float = 0.1
    confidence_theta: float = 0.2
    fallback_f1: float = 0.8

    def __post_init__(self) -> None:
        for name in ("correctness_change", "grounding_change", "calibration_change"):
            if getattr(self, name) <= 0.0:
                raise ConfigError("must be > 0", field=name)
        if self.redundancy_epsilon < 0.0 or self.confidence_theta <= 0.0:
            raise ConfigError("need redundancy_epsilon >= 0 and confidence_theta > 0")


@dataclass(frozen=True, slots=True)
class ItemInterventions:
    """Outcomes of one item under the original and the intervened traces.

    Attributes:
        gold: gold labels.
        original: outcome of tau.
        remove: outcome after REMOVE of the target, if run.
        replace: outcome after REPLACE, if run.
        duplicate: outcome after DUPLICATE, if run.
        zero: outcome with no evidence at all (ZERO control), if run.
    """

    gold: Gold
    original: Outcome
    remove: Outcome | None = None
    replace: Outcome | None = None
    duplicate: Outcome | None = None
    zero: Outcome | None = None


@dataclass(frozen=True, slots=True)
class ItemRoles:
    """Roles of one item.

    Attributes:
        roles: roles asserted for the item.
        not_evaluable: role -> why it could not be evaluated.
    """

    roles: frozenset[Role]
    not_evaluable: Mapping[Role, str] = field(default_factory=dict, hash=False)

    def indicator(self, role: Role) -> float | None:
        """1.0 / 0.0 when evaluable, ``None`` otherwise."""
        if role in self.not_evaluable:
            return None
        return 1.0 if role in self.roles else 0.0


def _moves(comparisons: Sequence[Comparison], t: RoleThresholds, sign: float) -> bool:
    for c in comparisons:
        corr, grnd = c.deltas["correctness"], c.deltas["grounding"]
        if corr is not None and sign * corr >= t.correctness_change - _EPS:
            return True
        if grnd is not None and sign * grnd >= t.grounding_change - _EPS:
            return True
    return False


def _redundant(c: Comparison, t: RoleThresholds) -> bool | str:
    if c.divergence is None:
        return "D under REMOVE not computable (a weighted term is missing)"
    limits = {
        "correctness": t.correctness_change,
        "grounding": t.grounding_change,
        "calibration_error": t.calibration_change,
    }
    still = all(
        (d := c.deltas[axis]) is None or abs(d) < limit - _EPS for axis, limit in limits.items()
    )
    return still and c.divergence <= t.redundancy_epsilon + _EPS


def _distorting(original: Outcome, others: Sequence[Outcome], t: RoleThresholds) -> bool | str:
    pairs = [o for o in others if o.confidence is not None]
    if original.confidence is None or not pairs:
        return "no confidence reported on the original and a REMOVE/DUPLICATE trace"
    base, c0 = normalise_answer(original.answer), original.confidence
    return any(
        normalise_answer(o.answer) == base
        and o.confidence is not None
        and abs(c0 - o.confidence) >= t.confidence_theta - _EPS
        for o in pairs
    )


def _corrective(item: ItemInterventions, t: RoleThresholds, axes: AxisSettings) -> bool | str:
    if item.gold.reference is None:
        return "no reference answer"
    if item.zero is None or item.remove is None:
        return "needs the ZERO and REMOVE traces"
    ref = item.gold.reference
    zero_ok = score_answer(item.zero.answer, ref, f1_threshold=axes.f1_threshold).correct
    orig_ok = score_answer(item.original.answer, ref, f1_threshold=axes.f1_threshold).correct
    fallback = score_answer(item.remove.answer, item.zero.answer, f1_threshold=t.fallback_f1)
    return (not zero_ok) and orig_ok and fallback.correct


def assign_roles(
    item: ItemInterventions,
    thresholds: RoleThresholds | None = None,
    axes: AxisSettings | None = None,
) -> ItemRoles:
    """Per-item roles by the criteria table of the module docstring."""
    t = thresholds or RoleThresholds()
    axes = axes or AxisSettings()
    roles: set[Role] = set()
    missing: dict[Role, str] = {}
    lowering = [o for o in (item.remove, item.replace) if o is not None]
    comps = [compare(item.original, o, item.gold, axes) for o in lowering]
    if comps:
        if _moves(comps, t, 1.0):
            roles.add(Role.CONSTRUCTIVE)
        if _moves(comps, t, -1.0):
            roles.add(Role.DISTRACTING)
    else:
        missing[Role.CONSTRUCTIVE] = missing[Role.DISTRACTING] = "needs REMOVE or REPLACE"
    outcomes: dict[Role, bool | str] = {
        Role.CORRECTIVE: _corrective(item, t, axes),
        Role.REDUNDANT: (
            _redundant(compare(item.original, item.remove, item.gold, axes), t)
            if item.remove is not None
            else "needs the REMOVE trace"
        ),
        Role.CONFIDENCE_DISTORTING: _distorting(
            item.original, [o for o in (item.remove, item.duplicate) if o is not None], t
        ),
    }
    for role, outcome in outcomes.items():
        if isinstance(outcome, str):
            missing[role] = outcome
        elif outcome:
            roles.add(role)
    return ItemRoles(frozenset(roles), missing)


class AggregateRole(msgspec.Struct, frozen=True):
    """Aggregate verdict on one role.

    Attributes:
        role: the role.
        asserted: whether the aggregate rule holds (a CI excludes 0).
        rate: mean of the per-item indicator over evaluable items, with CI.
        basis: the summaries the rule was decided on.
        rule: the rule, in words.
    """

    role: Role
    asserted: bool
    rate: DeltaSummary
    basis: tuple[DeltaSummary, ...]
    rule: str


def aggregate_roles(
    items: Sequence[ItemInterventions],
    thresholds: RoleThresholds | None = None,
    axes: AxisSettings | None = None,
    stats: StatsSettings | None = None,
) -> dict[Role, AggregateRole]:
    """Aggregate roles over items by the aggregate table of the module docstring."""
    t = thresholds or RoleThresholds()
    axes = axes or AxisSettings()
    per_item = [assign_roles(item, t, axes) for item in items]
    vectors: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {
        f"rate/{role}": as_vector([r.indicator(role) for r in per_item]) for role in Role
    }
    for op in ("REMOVE", "REPLACE"):
        comps = [
            None if o is None else compare(item.original, o, item.gold, axes)
            for item in items
            for o in [item.remove if op == "REMOVE" else item.replace]
        ]
        for axis in ("correctness", "grounding", "calibration_error"):
            vectors[f"{op}/{axis}"] = as_vector(
                [None if c is None else c.deltas[axis] for c in comps]
            )
        if op == "REMOVE":
            vectors["REMOVE/eps-minus-D"] = as_vector(
                [
                    None
                    if c is None or c.divergence is None
                    else t.redundancy_epsilon - c.divergence
                    for c in comps
                ]
            )
    s = summarise_deltas(vectors, stats)
    lowering = [
        s[f"{op}/{a}"] for op in ("REMOVE", "REPLACE") for a in ("correctness", "grounding")
    ]
    remove_axes = [s[f"REMOVE/{a}"] for a in ("correctness", "grounding", "calibration_error")]
    eps = s["REMOVE/eps-minus-D"]
    rules: dict[Role, tuple[bool, tuple[DeltaSummary, ...], str]] = {
        Role.CONSTRUCTIVE: (
            any(x.ci_low is not None and x.ci_low > 0.0 for x in lowering),
            tuple(lowering),
            "some REMOVE/REPLACE mean Δ of correctness or grounding has CI > 0",
        ),
        Role.DISTRACTING: (
            any(x.ci_high is not None and x.ci_high < 0.0 for x in lowering),
            tuple(lowering),
            "some REMOVE/REPLACE mean Δ of correctness or grounding has CI < 0",
        ),
        Role.REDUNDANT: (
            eps.ci_low is not None
            and eps.ci_low > 0.0
            and not any(x.ci_excludes_zero for x in remove_axes),
            (eps, *remove_axes),
            "CI of mean D under REMOVE below ε and no REMOVE axis CI excludes 0",
        ),
    }
    for role in (Role.CORRECTIVE, Role.CONFIDENCE_DISTORTING):
        rate = s[f"rate/{role}"]
        rules[role] = (rate.ci_excludes_zero, (rate,), "CI of the per-item rate excludes 0")
    return {
        role: AggregateRole(role, asserted, s[f"rate/{role}"], basis, rule)
        for role, (asserted, basis, rule) in rules.items()
    }
