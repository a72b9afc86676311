"""Cluster bootstrap over questions: the audit's intervals resample questions, not pairs.

The pairs of one question are not independent draws: the 1,081 pairs of a general question
over 47 sources are built from only 47 answers, and every source answers every question. A
bootstrap that resampled pairs (or answers) would treat them as independent and give intervals
far too narrow. The unit the audit samples is the question, so every interval here resamples
whole questions with replacement (a cluster bootstrap) and recomputes the pooled figure from
the drawn questions' items. With fewer than two questions there is nothing to resample and the
interval is undefined (None), never a zero-width interval.

Resamples come from :func:`groundtrace.analyzer.stats.bootstrap_counts` (how often each
question is drawn), so every figure computed with the same ``(questions, B, seed)`` shares its
resamples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from groundtrace.analyzer._agreement import Statistic
from groundtrace.analyzer.stats import bootstrap_counts, bootstrap_indices, percentile_interval

__all__ = ["MIN_CLUSTERS", "BatchStat", "cluster_statistic", "ratio_ci", "ratio_delta_ci"]

#: Fewest questions a cluster interval is computed from.
MIN_CLUSTERS = 2
FloatArray = npt.NDArray[np.float64]
#: A batched statistic: arrays of shape (batch, n) in, (values, defined mask) out.
BatchStat = Callable[..., tuple[FloatArray, npt.NDArray[np.bool_]]]


def _interval(replicates: FloatArray, confidence: float) -> tuple[float | None, float | None]:
    if not replicates.size:
        return None, None
    return percentile_interval(replicates, confidence)


def ratio_ci(
    numerators: Sequence[float],
    denominators: Sequence[float],
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float | None, float | None]:
    """Interval of ``sum(num) / sum(den)`` with questions (one entry each) resampled.

    Resamples whose drawn questions have a zero denominator are left out; None when fewer
    than :data:`MIN_CLUSTERS` questions contribute or no resample is defined.
    """
    den = np.asarray(denominators, dtype=np.float64)
    if int(np.count_nonzero(den)) < MIN_CLUSTERS:
        return None, None
    counts = bootstrap_counts(den.size, n_resamples, seed)
    num_b, den_b = counts @ np.asarray(numerators, dtype=np.float64), counts @ den
    defined = den_b > 0
    return _interval(num_b[defined] / den_b[defined], confidence)


def ratio_delta_ci(
    a: tuple[Sequence[float], Sequence[float]],
    b: tuple[Sequence[float], Sequence[float]],
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float | None, float | None]:
    """Interval of the pooled ratio of run B minus that of run A, each given as
    ``(numerators, denominators)`` per shared question, questions resampled jointly (paired)."""
    den_a, den_b = (np.asarray(x[1], dtype=np.float64) for x in (a, b))
    if den_a.size < MIN_CLUSTERS:
        return None, None
    counts = bootstrap_counts(den_a.size, n_resamples, seed)
    totals_a, totals_b = counts @ den_a, counts @ den_b
    defined = (totals_a > 0) & (totals_b > 0)
    ratio_a = (counts @ np.asarray(a[0], dtype=np.float64))[defined] / totals_a[defined]
    ratio_b = (counts @ np.asarray(b[0], dtype=np.float64))[defined] / totals_b[defined]
    return _interval(ratio_b - ratio_a, confidence)


def cluster_statistic(
    stat: BatchStat,
    arrays: Sequence[npt.NDArray[Any]],
    clusters: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
    undefined_reason: str = "",
) -> Statistic:
    """Point estimate of ``stat`` on paired item arrays, interval by resampling clusters.

    Args:
        stat: a batched statistic of :mod:`groundtrace.analyzer.judge` (or of this package).
        arrays: 1-D arrays of equal length; the first holds the reference labels.
        clusters: the cluster (question id) of each item.
        n_resamples: bootstrap resamples B.
        seed: seed of the cluster index matrix (recorded).
        confidence: interval coverage.
        undefined_reason: reason recorded when the point estimate is undefined.
    """
    n = len(clusters)
    if n == 0:
        return Statistic(None, None, None, "no items", 0, n_resamples, 0, seed)
    values, defined = stat(*(np.asarray(x)[None, :] for x in arrays))
    if not bool(defined[0]):
        reason = undefined_reason or "undefined on these items"
        return Statistic(None, None, None, reason, n, n_resamples, 0, seed)
    names = sorted(set(clusters))
    if len(names) < MIN_CLUSTERS:
        return Statistic(float(values[0]), None, None, None, n, n_resamples, n_resamples, seed)
    members = [np.flatnonzero(np.asarray(clusters) == name) for name in names]
    replicates: list[float] = []
    for drawn in bootstrap_indices(len(names), n_resamples, seed):
        idx = np.concatenate([members[i] for i in drawn])
        value, ok = stat(*(np.asarray(x)[idx][None, :] for x in arrays))
        if bool(ok[0]):
            replicates.append(float(value[0]))
    low, high = _interval(np.asarray(replicates, dtype=np.float64), confidence)
    undefined = n_resamples - len(replicates)
    return Statistic(float(values[0]), low, high, None, n, n_resamples, undefined, seed)
