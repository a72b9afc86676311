"""Per-trace metrics of the evidence-utility axes (SPEC 4.2.1).

Usage::

    from groundtrace.analyzer.metrics import grounding, score_answer, trace_divergence

    score_answer("The Beatles.", "Beatles").correct  # True (EM)
    score_answer("Pickles.", "Pepper.").fact_correct  # False: the name differs
    grounding({"c1", "c2"}, {"c1": "Paris", "c2": "Rome"}, {"Paris"})  # 0.5
    trace_divergence({"c1"}, set(), "Paris", "Rome", 0.9, 0.4)         # 0.5 + 0.3 + 0.1
"""

from __future__ import annotations

from ._divergence import (
    DEFAULT_DIVERGENCE_WEIGHTS,
    SENSITIVITY_WEIGHTS,
    DivergenceTerms,
    DivergenceWeights,
    divergence_terms,
    trace_divergence,
)
from ._evidence import calibration_error, grounding, jaccard_distance
from ._facts import Fact, distinguishing_facts
from ._text import (
    DEFAULT_F1_THRESHOLD,
    AnswerScore,
    exact_match,
    normalise_answer,
    score_answer,
    soft_correct,
    token_f1,
)

__all__ = [
    "DEFAULT_DIVERGENCE_WEIGHTS",
    "DEFAULT_F1_THRESHOLD",
    "SENSITIVITY_WEIGHTS",
    "AnswerScore",
    "DivergenceTerms",
    "DivergenceWeights",
    "Fact",
    "calibration_error",
    "distinguishing_facts",
    "divergence_terms",
    "exact_match",
    "grounding",
    "jaccard_distance",
    "normalise_answer",
    "score_answer",
    "soft_correct",
    "token_f1",
    "trace_divergence",
]
