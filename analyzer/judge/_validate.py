"""Judge meta-evaluation on a gold set (SPEC §4.4): grade, agreement statistics, CIs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from groundtrace.analyzer._agreement import (
    Statistic,
    auroc_batch,
    bootstrap_statistic,
    cohen_kappa_batch,
    mcc_batch,
    raw_agreement_batch,
)

from ._gold import GoldSet
from ._records import (
    VALIDATION_SCHEMA,
    BootstrapSettings,
    Grade,
    InterAnnotator,
    JudgeValidation,
    ProtocolErrorCounts,
    SweepPoint,
)
from ._types import DEFAULT_THRESHOLD, Judgment, Metric

__all__ = [
    "DECISION_MIN",
    "MINORITY_MIN",
    "SMOKE_MIN",
    "SWEEP_THRESHOLDS",
    "grade_set",
    "meta_evaluate",
]

#: Items needed for a smoke-grade set.
SMOKE_MIN = 30
#: Items needed for a decision-grade set.
DECISION_MIN = 100
#: Smallest share of the minority class for a valid set.
MINORITY_MIN = 0.30
#: Working thresholds of the MCC sweep.
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(1, 10))


def grade_set(
    n: int,
    n_pass: int,
    *,
    smoke_min: int = SMOKE_MIN,
    decision_min: int = DECISION_MIN,
    minority_min: float = MINORITY_MIN,
) -> Grade:
    """Grade of a labelled set: ``decision``, ``smoke`` or ``invalid`` with the reasons.

    ``size_grade`` is what the size alone would give; ``value`` is ``invalid`` when the size
    is below smoke grade or a class is missing or under ``minority_min``.
    """
    reasons: list[str] = []
    size_grade = "decision" if n >= decision_min else "smoke" if n >= smoke_min else "invalid"
    if size_grade == "invalid":
        reasons.append(f"{n} scored items < {smoke_min} needed for smoke grade")
    minority = min(n_pass, n - n_pass)
    share = minority / n if n else 0.0
    if minority == 0:
        reasons.append("only one class present: agreement cannot be measured")
    elif share < minority_min:
        cls = "fail" if n_pass > n - n_pass else "pass"
        reasons.append(
            f"minority class ({cls}) is {share:.1%} of items < {minority_min:.0%} required"
        )
    return Grade(
        "invalid" if reasons else size_grade, size_grade, not reasons, round(share, 4),
        tuple(reasons),
    )  # fmt: skip


def meta_evaluate(
    gold: GoldSet,
    results: Sequence[Judgment],
    *,
    metric: Metric,
    threshold: float = DEFAULT_THRESHOLD,
    n_resamples: int = 1000,
    seed: int = 20260709,
    smoke_min: int = SMOKE_MIN,
    decision_min: int = DECISION_MIN,
    minority_min: float = MINORITY_MIN,
) -> JudgeValidation:
    """Agreement of a judge's ``metric`` with the gold labels.

    Items with a protocol error on ``metric`` are left out of the statistics and counted
    (their rate is an acceptance criterion of its own); they are never scored as pass or fail.
    The judge predicts *pass* when its score is >= ``threshold``.

    Returns:
        The validation: ``n``, ``grade``, ``raw_agreement``, ``kappa``, ``mcc``, ``auroc``,
        ``sweep``, ``inter_annotator``, ``protocol_errors``... (each statistic a
        :class:`Statistic`).
    """
    if len(results) != len(gold.items):
        raise ValueError(f"{len(results)} results for {len(gold.items)} gold items")
    labels: list[bool] = []
    scores: list[float] = []
    kinds: Counter[str] = Counter()
    errored: list[str] = []
    for item, result in zip(gold.items, results, strict=True):
        score = result.scores.get(metric)
        if score is None:
            error = result.error_for(metric)
            kinds[error.kind.value if error else "missing"] += 1
            errored.append(item.case.case_id)
            continue
        labels.append(item.label)
        scores.append(score)
    y = np.asarray(labels, dtype=np.bool_)
    s = np.asarray(scores, dtype=np.float64)
    pred = s >= threshold

    def boot(stat: Any, *arrays: Any) -> Statistic:
        return bootstrap_statistic(stat, arrays, n_resamples=n_resamples, seed=seed)

    n = int(y.size)
    n_items = len(gold.items)
    return JudgeValidation(
        schema=VALIDATION_SCHEMA,
        dimension=metric.value,
        threshold=threshold,
        n=n,
        n_items=n_items,
        gold=gold.describe(),
        grade=grade_set(
            n,
            int(y.sum()),
            smoke_min=smoke_min,
            decision_min=decision_min,
            minority_min=minority_min,
        ),
        protocol_errors=ProtocolErrorCounts(
            len(errored),
            round(len(errored) / n_items, 4) if n_items else None,
            dict(sorted(kinds.items())),
            tuple(errored[:100]),
        ),
        raw_agreement=boot(raw_agreement_batch, y, pred),
        kappa=boot(cohen_kappa_batch, y, pred),
        mcc=boot(mcc_batch, y, pred),
        auroc=boot(auroc_batch, y, s),
        sweep=tuple(SweepPoint(t, boot(mcc_batch, y, s >= t)) for t in SWEEP_THRESHOLDS),
        inter_annotator=_inter_annotator(gold, boot),
        judge_pass_rate=round(float(pred.mean()), 4) if n else None,
        bootstrap=BootstrapSettings(n_resamples, seed),
    )


def _inter_annotator(gold: GoldSet, boot: Any) -> InterAnnotator:
    if gold.layout != "two_annotators":
        return InterAnnotator(
            False,
            f"single-label set (label field {gold.label_field!r}): no second annotator to compare",
        )
    a = np.asarray([bool(i.annotator_a) for i in gold.items], dtype=np.bool_)
    b = np.asarray([bool(i.annotator_b) for i in gold.items], dtype=np.bool_)
    return InterAnnotator(
        True,
        raw_agreement=boot(raw_agreement_batch, a, b),
        kappa=boot(cohen_kappa_batch, a, b),
    )
