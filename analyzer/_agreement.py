"""Agreement statistics for binary labels, vectorised over bootstrap resamples.

Point estimates match scikit-learn's ``cohen_kappa_score``, ``matthews_corrcoef`` and
``roc_auc_score`` wherever those are mathematically defined. Where they are not, this module
says so (``value=None`` with a reason) instead of returning NaN or 0 as scikit-learn does:

* Cohen's kappa is undefined when the reference labels hold a single class (or when chance
  agreement is 1);
* MCC is undefined when a row or column of the confusion matrix is empty;
* AUROC is undefined when the reference labels hold a single class.

Every function here takes 2-D ``(batch, n)`` arrays so one call evaluates the point estimate
(``batch = 1``) or all bootstrap resamples at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from groundtrace.analyzer.stats import bootstrap_indices, percentile_interval

__all__ = [
    "BinaryStat",
    "Statistic",
    "auroc_batch",
    "bootstrap_statistic",
    "cohen_kappa_batch",
    "mcc_batch",
    "raw_agreement_batch",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
#: A batched statistic: arrays of shape (batch, n) in, (values, defined mask, reason) out.
BinaryStat = Callable[..., tuple[FloatArray, BoolArray]]


class Statistic(msgspec.Struct, frozen=True):
    """One statistic with its 95% percentile-bootstrap interval.

    Attributes:
        value: point estimate; None when undefined on this sample.
        ci_low: lower bound of the interval (None when undefined).
        ci_high: upper bound of the interval (None when undefined).
        undefined_reason: why ``value`` is None.
        n: items the statistic was computed on.
        n_resamples: bootstrap resamples B.
        undefined_resamples: resamples on which the statistic was undefined (left out of the
            interval).
        seed: seed of the bootstrap index matrix.
    """

    value: float | None
    ci_low: float | None
    ci_high: float | None
    undefined_reason: str | None
    n: int
    n_resamples: int
    undefined_resamples: int
    seed: int


_Counts = tuple[FloatArray, FloatArray, FloatArray, FloatArray]


def _counts(ref: BoolArray, pred: BoolArray) -> _Counts:
    def count(mask: BoolArray) -> FloatArray:
        return np.asarray(np.sum(mask, axis=-1), dtype=np.float64)

    return count(ref & pred), count(~ref & ~pred), count(~ref & pred), count(ref & ~pred)


def raw_agreement_batch(ref: BoolArray, pred: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Share of items on which the two label vectors agree (always defined for n >= 1)."""
    values = np.asarray(np.mean(ref == pred, axis=-1), dtype=np.float64)
    return values, np.ones(values.shape, dtype=np.bool_)


def cohen_kappa_batch(ref: BoolArray, pred: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Cohen's kappa; undefined where ``ref`` holds one class or chance agreement is 1."""
    tp, tn, fp, fn = _counts(ref, pred)
    n = tp + tn + fp + fn
    po = (tp + tn) / n
    ref1, pred1 = (tp + fn) / n, (tp + fp) / n
    pe = ref1 * pred1 + (1.0 - ref1) * (1.0 - pred1)
    defined = (ref1 > 0) & (ref1 < 1) & (pe < 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(defined, (po - pe) / np.where(defined, 1.0 - pe, 1.0), np.nan)
    return values, defined


def mcc_batch(ref: BoolArray, pred: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Matthews correlation; undefined where either vector holds a single class."""
    tp, tn, fp, fn = _counts(ref, pred)
    denom_sq = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    defined = denom_sq > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(
            defined, (tp * tn - fp * fn) / np.sqrt(np.where(defined, denom_sq, 1.0)), np.nan
        )
    return values, defined


def auroc_batch(ref: BoolArray, score: FloatArray) -> tuple[FloatArray, BoolArray]:
    """Area under the ROC curve (Mann-Whitney, ties count one half); needs both classes."""
    from scipy.stats import rankdata  # here, not at import: scipy.stats costs ~1 s to load

    ranks = rankdata(score, axis=-1)
    n_pos = np.sum(ref, axis=-1, dtype=np.float64)
    n_neg = ref.shape[-1] - n_pos
    defined = (n_pos > 0) & (n_neg > 0)
    rank_sum = np.sum(np.where(ref, ranks, 0.0), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(
            defined,
            (rank_sum - n_pos * (n_pos + 1.0) / 2.0) / np.where(defined, n_pos * n_neg, 1.0),
            np.nan,
        )
    return np.asarray(values, dtype=np.float64), defined


def _reason(stat: BinaryStat, arrays: Sequence[npt.NDArray[Any]]) -> str:
    ref = np.asarray(arrays[0], dtype=np.bool_)
    if ref.all() or not ref.any():
        return f"reference labels hold a single class ({'pass' if ref.all() else 'fail'})"
    if stat is mcc_batch:
        pred = np.asarray(arrays[1], dtype=np.bool_)
        return f"predictions hold a single class ({'pass' if pred.all() else 'fail'})"
    return "chance agreement is 1"


def bootstrap_statistic(
    stat: BinaryStat,
    arrays: Sequence[npt.NDArray[Any]],
    *,
    n_resamples: int = 1000,
    seed: int = 20260709,
    confidence: float = 0.95,
) -> Statistic:
    """Point estimate and percentile-bootstrap interval of ``stat`` on paired 1-D arrays.

    Resamples come from :func:`groundtrace.analyzer.stats.bootstrap_indices`, so every
    statistic computed with the same ``(n, n_resamples, seed)`` shares the same resamples.
    Resamples on which the statistic is undefined are left out of the interval and counted.

    Args:
        stat: one of the ``*_batch`` functions of this module.
        arrays: 1-D arrays of equal length ``n``; the first is the reference labels.
        n_resamples: bootstrap resamples B.
        seed: seed of the index matrix (recorded in the result).
        confidence: interval coverage.
    """
    n = len(arrays[0])
    if n == 0:
        return Statistic(None, None, None, "no items", 0, n_resamples, 0, seed)
    point_values, point_defined = stat(*(np.asarray(a)[None, :] for a in arrays))
    if not bool(point_defined[0]):
        return Statistic(None, None, None, _reason(stat, arrays), n, n_resamples, 0, seed)
    idx = bootstrap_indices(n, n_resamples, seed)
    values, defined = stat(*(np.asarray(a)[idx] for a in arrays))
    kept = values[defined]
    undefined = int(n_resamples - kept.size)
    low: float | None
    high: float | None
    if kept.size:
        low, high = percentile_interval(kept.astype(np.float64), confidence)
    else:
        low = high = None
    return Statistic(float(point_values[0]), low, high, None, n, n_resamples, undefined, seed)
