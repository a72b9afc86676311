"""Comparison of two audit runs (e.g. flat top-k vs hierarchical retrieval), paired by question.

Per question: the absence rate (share of answers that do not address it) and the disagreement
prevalence in each run. Overall: the change of the pooled absence rate (absent answers over
answers) and of the pooled disagreement prevalence (disagreeing over present pairs) over the
questions both runs share, each with a seeded 95% cluster-bootstrap interval that resamples
those questions jointly in both runs (paired; questions, not pairs, are the independent units:
see :mod:`._clusters`); the intensity (share of disagreeing pairs with high significance) of
each run; and every pair whose label flipped.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.errors import InputError

from ._clusters import ratio_delta_ci
from ._model import Label, PairLabel
from ._records import AuditResult, AuditSettings
from ._summary import DISAGREEMENT_LABELS

__all__ = ["AuditComparison", "Delta", "FlippedPair", "QuestionChange", "compare_runs"]


class Delta(msgspec.Struct, frozen=True, kw_only=True):
    """Change B - A of a pooled figure over the questions both runs define it for.

    Attributes:
        value_a: the pooled figure of run A on those questions (None: no question).
        value_b: the same for run B.
        delta: ``value_b - value_a``.
        ci_low: lower bound of the paired 95% cluster-bootstrap interval (None: fewer than
            two questions).
        ci_high: upper bound.
        n_questions: the questions pooled (and resampled).
        n_resamples: bootstrap resamples.
        seed: their seed.
    """

    value_a: float | None
    value_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    n_questions: int
    n_resamples: int
    seed: int


class QuestionChange(msgspec.Struct, frozen=True, kw_only=True):
    """One question's figures in run A and run B (None where undefined)."""

    question_id: str
    absence_a: float
    absence_b: float
    prevalence_a: float | None
    prevalence_b: float | None


class FlippedPair(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """A pair whose label differs between the runs."""

    question_id: str
    source_a: str
    source_b: str
    label_a: Label
    label_b: Label


class AuditComparison(Result, frozen=True, kw_only=True):
    """Run B against run A.

    Attributes:
        run_a: settings of run A.
        run_b: settings of run B.
        questions: per-question figures.
        absence: change of the pooled absence rate.
        prevalence: change of the pooled disagreement prevalence.
        intensity_a: share of run A's disagreeing pairs with high significance (None: none).
        intensity_b: the same for run B.
        flipped: pairs whose label changed.
        n_common_pairs: pairs present in both runs.
    """

    run_a: AuditSettings
    run_b: AuditSettings
    questions: tuple[QuestionChange, ...]
    absence: Delta
    prevalence: Delta
    intensity_a: float | None
    intensity_b: float | None
    flipped: tuple[FlippedPair, ...]
    n_common_pairs: int


_Counts = tuple[int, int]  # (hits, items) of one question


def _delta(counts: Sequence[tuple[_Counts, _Counts]], n_resamples: int, seed: int) -> Delta:
    """Pooled change from per-question ``((hits_a, items_a), (hits_b, items_b))``."""
    kept = [(a, b) for a, b in counts if a[1] and b[1]]
    if not kept:
        return Delta(value_a=None, value_b=None, delta=None, ci_low=None, ci_high=None,
                     n_questions=0, n_resamples=n_resamples, seed=seed)  # fmt: skip
    pooled = [sum(x[run][0] for x in kept) / sum(x[run][1] for x in kept) for run in (0, 1)]
    low, high = ratio_delta_ci(
        ([a[0] for a, _ in kept], [a[1] for a, _ in kept]),
        ([b[0] for _, b in kept], [b[1] for _, b in kept]),
        n_resamples, seed,
    )  # fmt: skip
    return Delta(
        value_a=pooled[0], value_b=pooled[1], delta=pooled[1] - pooled[0], ci_low=low,
        ci_high=high, n_questions=len(kept), n_resamples=n_resamples, seed=seed,
    )  # fmt: skip


def _intensity(pairs: Sequence[PairLabel]) -> float | None:
    disagreeing = [p for p in pairs if p.label in DISAGREEMENT_LABELS]
    if not disagreeing:
        return None
    return sum(p.significance == "high" for p in disagreeing) / len(disagreeing)


def compare_runs(
    run_a: AuditResult, run_b: AuditResult, *, n_resamples: int = 2000, seed: int = 20260709
) -> AuditComparison:
    """Run B against run A, paired by question.

    Raises:
        InputError: the runs share no question.
    """
    absent_a = {f.key: f for f in run_a.summary.absence_by_question}
    absent_b = {f.key: f for f in run_b.summary.absence_by_question}
    present_a = {f.key: f for f in run_a.summary.by_question}
    present_b = {f.key: f for f in run_b.summary.by_question}
    common = sorted(absent_a.keys() & absent_b.keys())
    if not common:
        raise InputError("the two runs share no question", field="questions")
    changes = tuple(
        QuestionChange(
            question_id=q, absence_a=absent_a[q].rate, absence_b=absent_b[q].rate,
            prevalence_a=present_a[q].prevalence if q in present_a else None,
            prevalence_b=present_b[q].prevalence if q in present_b else None,
        )
        for q in common
    )  # fmt: skip
    absence = [
        (
            (absent_a[q].n_absent, absent_a[q].n_answers),
            (absent_b[q].n_absent, absent_b[q].n_answers),
        )
        for q in common
    ]
    prevalence = [
        ((present_a[q].n_disagree, present_a[q].n_present),
         (present_b[q].n_disagree, present_b[q].n_present))
        for q in common
        if q in present_a and q in present_b
    ]  # fmt: skip
    labels_b = {p.key: p.label for p in run_b.pairs}
    shared = [p for p in run_a.pairs if p.key in labels_b]
    flipped = tuple(
        FlippedPair(
            question_id=p.question_id, source_a=p.source_a, source_b=p.source_b,
            label_a=p.label, label_b=labels_b[p.key],
        )
        for p in shared
        if p.label != labels_b[p.key]
    )  # fmt: skip
    return AuditComparison(
        run_a=run_a.settings,
        run_b=run_b.settings,
        questions=changes,
        absence=_delta(absence, n_resamples, seed),
        prevalence=_delta(prevalence, n_resamples, seed),
        intensity_a=_intensity(run_a.pairs),
        intensity_b=_intensity(run_b.pairs),
        flipped=flipped,
        n_common_pairs=len(shared),
    )
