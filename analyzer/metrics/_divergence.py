"""Trace divergence D between an original and a counterfactual trace (SPEC 4.2.1).

``D(tau, tau~) = w_U * d_J(U, U~) + w_y * 1[y != y~] + w_c * |c - c~|`` with default
weights 0.5 / 0.3 / 0.2 (profile settings). Answers are compared after normalisation.

When a term cannot be computed (a confidence is missing) and its weight is non-zero, D is
missing (``None``) -- it is never computed with the term silently set to 0. Weight sets that
put zero weight on the missing term (e.g. "used set alone") remain computable, which is what
the weight-sensitivity table shows.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import msgspec

from groundtrace.analyzer.errors import ConfigError

from ._evidence import jaccard_distance
from ._text import normalise_answer

__all__ = [
    "DEFAULT_DIVERGENCE_WEIGHTS",
    "SENSITIVITY_WEIGHTS",
    "DivergenceTerms",
    "DivergenceWeights",
    "divergence_terms",
    "trace_divergence",
]


class DivergenceWeights(msgspec.Struct, frozen=True):
    """Weights of the three divergence terms (non-negative, summing to 1).

    Attributes:
        used: weight of the Jaccard distance of the used sets.
        answer: weight of the answer-changed indicator.
        confidence: weight of the absolute confidence change.
    """

    used: float = 0.5
    answer: float = 0.3
    confidence: float = 0.2

    def __post_init__(self) -> None:
        weights = (self.used, self.answer, self.confidence)
        if min(weights) < 0.0:
            raise ConfigError(f"negative weight in {weights}", field="divergence_weights")
        if abs(sum(weights) - 1.0) > 1e-9:
            raise ConfigError(f"weights {weights} must sum to 1", field="divergence_weights")

    def as_tuple(self) -> tuple[float, float, float]:
        """``(used, answer, confidence)``."""
        return (self.used, self.answer, self.confidence)


#: SPEC default weights 0.5 / 0.3 / 0.2.
DEFAULT_DIVERGENCE_WEIGHTS = DivergenceWeights()

#: Weight sets of the sensitivity table: the default, equal weights and each term alone.
SENSITIVITY_WEIGHTS: dict[str, DivergenceWeights] = {
    "default": DEFAULT_DIVERGENCE_WEIGHTS,
    "equal": DivergenceWeights(1 / 3, 1 / 3, 1 / 3),
    "used_only": DivergenceWeights(1.0, 0.0, 0.0),
    "answer_only": DivergenceWeights(0.0, 1.0, 0.0),
    "confidence_only": DivergenceWeights(0.0, 0.0, 1.0),
}


@dataclass(frozen=True, slots=True)
class DivergenceTerms:
    """The three unweighted divergence terms of one original/counterfactual pair.

    Attributes:
        used: Jaccard distance of the used-evidence sets.
        answer: 1.0 when the normalised answers differ, else 0.0.
        confidence: |c - c~|, ``None`` when either confidence is missing.
    """

    used: float
    answer: float
    confidence: float | None

    def weighted(self, weights: DivergenceWeights = DEFAULT_DIVERGENCE_WEIGHTS) -> float | None:
        """D under ``weights``; ``None`` when a term with non-zero weight is missing."""
        if self.confidence is None:
            if weights.confidence != 0.0:
                return None
            return weights.used * self.used + weights.answer * self.answer
        return (
            weights.used * self.used
            + weights.answer * self.answer
            + weights.confidence * self.confidence
        )


def divergence_terms(
    used: Collection[str],
    used_cf: Collection[str],
    answer: str,
    answer_cf: str,
    confidence: float | None,
    confidence_cf: float | None,
) -> DivergenceTerms:
    """The unweighted terms of D for one pair of traces (original, counterfactual)."""
    changed = normalise_answer(answer) != normalise_answer(answer_cf)
    delta_c = (
        None if confidence is None or confidence_cf is None else abs(confidence - confidence_cf)
    )
    return DivergenceTerms(
        used=jaccard_distance(used, used_cf), answer=1.0 if changed else 0.0, confidence=delta_c
    )


def trace_divergence(
    used: Collection[str],
    used_cf: Collection[str],
    answer: str,
    answer_cf: str,
    confidence: float | None,
    confidence_cf: float | None,
    weights: DivergenceWeights = DEFAULT_DIVERGENCE_WEIGHTS,
) -> float | None:
    """D(tau, tau~) under ``weights`` (``None`` when a weighted term is missing)."""
    terms = divergence_terms(used, used_cf, answer, answer_cf, confidence, confidence_cf)
    return terms.weighted(weights)
