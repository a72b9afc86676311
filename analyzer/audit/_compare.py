"""Comparison of two audit runs (e.g. flat top-k vs hierarchical retrieval), paired by question.

Per question: the absence rate (share of answers that do not address it) and the disagreement
prevalence in each run; the mean change over questions with a seeded percentile-bootstrap
interval (questions resampled); the intensity (share of disagreeing pairs with high
significance) of each run; and every pair whose label flipped.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.stats import bootstrap_mean_ci

from ._model import Label, PairLabel
from ._records import AuditRun, AuditSettings
from ._summary import DISAGREEMENT_LABELS

__all__ = ["AuditComparison", "Delta", "FlippedPair", "QuestionChange", "compare_runs"]


class Delta(msgspec.Struct, frozen=True, kw_only=True):
    """Mean change B - A over the questions where both runs define the figure."""

    mean: float | None
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
        absence: change of the absence rate.
        prevalence: change of the disagreement prevalence.
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


def _delta(values: Sequence[tuple[float, float]], n_resamples: int, seed: int) -> Delta:
    if not values:
        return Delta(mean=None, ci_low=None, ci_high=None, n_questions=0,
                     n_resamples=n_resamples, seed=seed)  # fmt: skip
    deltas = np.asarray([[b - a] for a, b in values], dtype=np.float64)
    means, lows, highs = bootstrap_mean_ci(deltas, n_resamples, seed, 0.95)
    return Delta(
        mean=float(means[0]), ci_low=float(lows[0]), ci_high=float(highs[0]),
        n_questions=len(values), n_resamples=n_resamples, seed=seed,
    )  # fmt: skip


def _intensity(pairs: Sequence[PairLabel]) -> float | None:
    disagreeing = [p for p in pairs if p.label in DISAGREEMENT_LABELS]
    if not disagreeing:
        return None
    return sum(p.significance == "high" for p in disagreeing) / len(disagreeing)


def compare_runs(
    run_a: AuditRun, run_b: AuditRun, *, n_resamples: int = 2000, seed: int = 20260709
) -> AuditComparison:
    """Run B against run A, paired by question.

    Raises:
        InputError: the runs share no question.
    """
    absence_a = {f.key: f.rate for f in run_a.summary.absence_by_question}
    absence_b = {f.key: f.rate for f in run_b.summary.absence_by_question}
    prevalence_a = {f.key: f.prevalence for f in run_a.summary.by_question}
    prevalence_b = {f.key: f.prevalence for f in run_b.summary.by_question}
    common = sorted(absence_a.keys() & absence_b.keys())
    if not common:
        raise InputError("the two runs share no question", field="questions")
    changes = tuple(
        QuestionChange(
            question_id=q, absence_a=absence_a[q], absence_b=absence_b[q],
            prevalence_a=prevalence_a.get(q), prevalence_b=prevalence_b.get(q),
        )
        for q in common
    )  # fmt: skip
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
    both_defined = [
        (c.prevalence_a, c.prevalence_b)
        for c in changes
        if c.prevalence_a is not None and c.prevalence_b is not None
    ]
    return AuditComparison(
        run_a=run_a.settings,
        run_b=run_b.settings,
        questions=changes,
        absence=_delta([(c.absence_a, c.absence_b) for c in changes], n_resamples, seed),
        prevalence=_delta(both_defined, n_resamples, seed),
        intensity_a=_intensity(run_a.pairs),
        intensity_b=_intensity(run_b.pairs),
        flipped=flipped,
        n_common_pairs=len(shared),
    )
