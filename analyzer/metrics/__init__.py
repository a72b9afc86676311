"""Per-trace metrics of the evidence-utility axes (SPEC 4.2.1).

Usage::

    from groundtrace.analyzer.metrics import grounding, score_answer, trace_divergence

    score_answer("The Beatles.", "Beatles").correct  # True (EM)
    score_answer("Pickles.", "Pepper.").fact_correct  # False: the name differs
    grounding({"c1", "c2"}, {"c1": "Paris", "c2": "Rome"}, {"Paris"})  # 0.5
    trace_divergence({"c1"}, set(), "Paris", "Rome", 0.9, 0.4)         # 0.5 + 0.3 + 0.1
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._divergence import (
    DEFAULT_DIVERGENCE_WEIGHTS,
    SENSITIVITY_WEIGHTS,
    DivergenceTerms,
    DivergenceWeights,
    divergence_terms,
    trace_divergence,
)
from ._evidence import calibration_error, grounding
from ._text import DEFAULT_F1_THRESHOLD, AnswerScore, normalise_answer, score_answer

__all__ = [
    "DEFAULT_DIVERGENCE_WEIGHTS",
    "DEFAULT_F1_THRESHOLD",
    "SENSITIVITY_WEIGHTS",
    "AnswerScore",
    "DivergenceTerms",
    "DivergenceWeights",
    "calibration_error",
    "divergence_terms",
    "grounding",
    "normalise_answer",
    "score_answer",
    "trace_divergence",
]

#: Parts of :func:`score_answer` and :func:`trace_divergence`, no longer public (0.2.0):
#: importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "Fact": f"{__name__}._facts.Fact",
        "distinguishing_facts": f"{__name__}._facts.distinguishing_facts",
        "exact_match": f"{__name__}._text.exact_match",
        "jaccard_distance": f"{__name__}._evidence.jaccard_distance",
        "soft_correct": f"{__name__}._text.soft_correct",
        "token_f1": f"{__name__}._text.token_f1",
    },
    since="0.2.0",
    remove_in="0.3.0",
)
