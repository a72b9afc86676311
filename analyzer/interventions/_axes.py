"""The four evidence-utility axes of one trace and of an original/counterfactual pair.

SPEC 4.2.1: correctness (soft, with EM and F1 reported), grounding, calibration error and
the trace divergence D; Δ_k = U_k(tau) - U_k(tau~) per item, operator and axis (so for
calibration error, where lower is better, a negative Δ means the intervention worsened
calibration). Missing values (no reference answer, no confidence)
are ``None`` here and NaN in the vectors handed to the statistics, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import msgspec
import numpy as np
import numpy.typing as npt

from groundtrace.analyzer.metrics import (
    DEFAULT_DIVERGENCE_WEIGHTS,
    DEFAULT_F1_THRESHOLD,
    SENSITIVITY_WEIGHTS,
    DivergenceTerms,
    DivergenceWeights,
    calibration_error,
    divergence_terms,
    grounding,
    score_answer,
)
from groundtrace.analyzer.stats import (
    DeltaSummary,
    PairedSummary,
    StatsSettings,
    summarise_deltas,
    summarise_paired,
)

__all__ = [
    "DELTA_AXES",
    "DIVERGENCE",
    "REPORTED_AXES",
    "AxisScores",
    "AxisSettings",
    "Comparison",
    "Gold",
    "OperatorSummary",
    "Outcome",
    "SensitivityRow",
    "as_vector",
    "compare",
    "divergence_sensitivity",
    "score_outcome",
    "summarise_operators",
]

#: Axes with a per-item Δ (higher is better except calibration error).
DELTA_AXES: tuple[str, ...] = ("correctness", "grounding", "calibration_error")
#: Reported alongside correctness (SPEC: "report EM and F1 too"), and fact correctness (EM, or
#: F1 >= the threshold with the reference's times, dates, numbers and names stated: the
#: gate's and paths' rule), beside CUE-R's correctness, never in place of it.
REPORTED_AXES: tuple[str, ...] = ("exact_match", "f1", "fact_correctness")
#: The fourth axis, a per-pair distance D >= 0 (tested one-sided against 0).
DIVERGENCE = "divergence"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one trace (original or counterfactual) produced.

    Attributes:
        answer: the final answer y.
        confidence: the reported confidence c in [0, 1], ``None`` when not reported.
        used_ids: U, ids of the evidence chunks the model used.
        titles: chunk id -> title, covering at least ``used_ids``.
    """

    answer: str
    confidence: float | None = None
    used_ids: frozenset[str] = frozenset()
    titles: Mapping[str, str] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Gold:
    """Gold labels of one case.

    Attributes:
        reference: the reference answer, ``None`` when the case has none (correctness,
            EM, F1 and calibration error are then not computed).
        support_titles: S, the gold supporting titles.
    """

    reference: str | None
    support_titles: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class AxisSettings:
    """Axis settings of the profile.

    Attributes:
        f1_threshold: token F1 at or above which an answer is correct (0.8).
        divergence_weights: weights of D (0.5 / 0.3 / 0.2).
    """

    f1_threshold: float = DEFAULT_F1_THRESHOLD
    divergence_weights: DivergenceWeights = DEFAULT_DIVERGENCE_WEIGHTS


@dataclass(frozen=True, slots=True)
class AxisScores:
    """Axis values of one trace (``None`` = not computed, recorded as missing)."""

    correct: bool | None
    exact_match: bool | None
    f1: float | None
    grounding: float
    calibration_error: float | None
    fact_correct: bool | None = None

    def value(self, axis: str) -> float | None:
        """Numeric value of ``axis`` (booleans as 0.0 / 1.0), ``None`` when missing."""
        name = {"correctness": "correct", "fact_correctness": "fact_correct"}.get(axis, axis)
        raw: bool | float | None = getattr(self, name)
        return None if raw is None else float(raw)


def score_outcome(outcome: Outcome, gold: Gold, settings: AxisSettings | None = None) -> AxisScores:
    """Score one trace on the per-trace axes.

    Raises:
        InputError: a used id has no title, or the confidence lies outside [0, 1].
    """
    settings = settings or AxisSettings()
    grnd = grounding(outcome.used_ids, outcome.titles, gold.support_titles)
    if gold.reference is None:
        return AxisScores(None, None, None, grnd, None)
    score = score_answer(outcome.answer, gold.reference, f1_threshold=settings.f1_threshold)
    return AxisScores(
        correct=score.correct,
        exact_match=score.em,
        f1=score.f1,
        grounding=grnd,
        calibration_error=calibration_error(outcome.confidence, score.correct),
        fact_correct=score.fact_correct,
    )


@dataclass(frozen=True, slots=True)
class Comparison:
    """One item under one operator: both traces scored, the deltas and D.

    Attributes:
        original: axes of tau.
        counterfactual: axes of tau~.
        deltas: Δ_k = U_k(tau) - U_k(tau~) for :data:`DELTA_AXES` and :data:`REPORTED_AXES`
            (``None`` when either side is missing).
        terms: the unweighted divergence terms.
        divergence: D under the settings' weights (``None`` when a weighted term is missing).
    """

    original: AxisScores
    counterfactual: AxisScores
    deltas: Mapping[str, float | None]
    terms: DivergenceTerms
    divergence: float | None


def compare(
    original: Outcome,
    counterfactual: Outcome,
    gold: Gold,
    settings: AxisSettings | None = None,
) -> Comparison:
    """Score an original/counterfactual pair of one item."""
    settings = settings or AxisSettings()
    before = score_outcome(original, gold, settings)
    after = score_outcome(counterfactual, gold, settings)
    deltas: dict[str, float | None] = {}
    for axis in DELTA_AXES + REPORTED_AXES:
        a, b = before.value(axis), after.value(axis)
        deltas[axis] = None if a is None or b is None else a - b
    terms = divergence_terms(
        original.used_ids,
        counterfactual.used_ids,
        original.answer,
        counterfactual.answer,
        original.confidence,
        counterfactual.confidence,
    )
    return Comparison(before, after, deltas, terms, terms.weighted(settings.divergence_weights))


def as_vector(values: Sequence[float | None]) -> npt.NDArray[np.float64]:
    """``values`` as a float vector, ``None`` as NaN (a missing item of the statistics)."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


class OperatorSummary(msgspec.Struct, frozen=True):
    """Statistics of one operator over all items.

    Attributes:
        operator: e.g. ``"REMOVE"``.
        n_items: items compared.
        axes: axis -> means per condition and Δ summary (delta and reported axes).
        divergence: summary of D, one-sided (``greater``) test against 0.
    """

    operator: str
    n_items: int
    axes: dict[str, PairedSummary]
    divergence: DeltaSummary


def summarise_operators(
    comparisons: Mapping[str, Sequence[Comparison]],
    stats: StatsSettings | None = None,
) -> dict[str, OperatorSummary]:
    """Means per condition, mean Δ with CI and tests, per operator and axis (vectorised).

    All operators and axes go through one call of the statistics, so vectors with the same
    number of items and no missing values share one index matrix and one sign matrix.

    Args:
        comparisons: operator -> the per-item comparisons (item order is irrelevant).
        stats: B, seeds, confidence (SPEC defaults when omitted).
    """
    original: dict[str, npt.NDArray[np.float64]] = {}
    counterfactual: dict[str, npt.NDArray[np.float64]] = {}
    divergences: dict[str, npt.NDArray[np.float64]] = {}
    for op, items in comparisons.items():
        for axis in DELTA_AXES + REPORTED_AXES:
            original[f"{op}/{axis}"] = as_vector([c.original.value(axis) for c in items])
            counterfactual[f"{op}/{axis}"] = as_vector(
                [c.counterfactual.value(axis) for c in items]
            )
        divergences[op] = as_vector([c.divergence for c in items])
    paired = summarise_paired(original, counterfactual, stats)
    d_summary = summarise_deltas(
        {f"{op}/{DIVERGENCE}": v for op, v in divergences.items()}, stats, "greater"
    )
    return {
        op: OperatorSummary(
            operator=op,
            n_items=len(items),
            axes={a: paired[f"{op}/{a}"] for a in DELTA_AXES + REPORTED_AXES},
            divergence=d_summary[f"{op}/{DIVERGENCE}"],
        )
        for op, items in comparisons.items()
    }


class SensitivityRow(msgspec.Struct, frozen=True):
    """Mean D of one operator under one weight set."""

    operator: str
    weights_name: str
    weights: DivergenceWeights
    summary: DeltaSummary


def divergence_sensitivity(
    comparisons: Mapping[str, Sequence[Comparison]],
    weight_sets: Mapping[str, DivergenceWeights] | None = None,
    stats: StatsSettings | None = None,
) -> list[SensitivityRow]:
    """Weight-sensitivity table of D: mean D with CI and one-sided p per operator and weights.

    Args:
        comparisons: operator -> per-item comparisons.
        weight_sets: name -> weights; default :data:`SENSITIVITY_WEIGHTS` (default, equal
            weights and each term alone).
        stats: statistics settings.

    Returns:
        Rows ordered by operator, then weight set.
    """
    weight_sets = weight_sets or SENSITIVITY_WEIGHTS
    vectors: dict[str, npt.NDArray[np.float64]] = {}
    keys: list[tuple[str, str]] = []
    for op, items in comparisons.items():
        terms = np.array(
            [
                [
                    c.terms.used,
                    c.terms.answer,
                    np.nan if c.terms.confidence is None else c.terms.confidence,
                ]
                for c in items
            ],
            dtype=np.float64,
        ).reshape(len(items), 3)
        for name, weights in weight_sets.items():
            w = np.array(weights.as_tuple())
            # A term with weight 0 contributes nothing even when it is missing.
            contribution = np.where(w[None, :] == 0.0, 0.0, terms * w[None, :])
            vectors[f"{op}|{name}"] = contribution.sum(axis=1)
            keys.append((op, name))
    summaries = summarise_deltas(vectors, stats, "greater")
    return [
        SensitivityRow(op, name, weight_sets[name], summaries[f"{op}|{name}"]) for op, name in keys
    ]
