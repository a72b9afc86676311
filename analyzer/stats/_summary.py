"""Summaries of paired deltas: mean, percentile CI, sign-flip p-value, Wilcoxon cross-check.

Input vectors use NaN as the *missing* marker (for example a calibration error that could not
be computed because the app reported no confidence). Missing items are dropped from that
vector only, never replaced by 0, and their number is recorded. Vectors with the same
missingness pattern share one bootstrap index matrix and one sign matrix, so in the usual case
(no missing values) every axis and operator is resampled with the same matrices.

Edge cases are explicit and recorded in ``note``:

* ``n = 0`` -- nothing was measured: mean, CI and p-values are ``None``;
* ``n = 1`` -- the CI collapses to ``[d, d]``; the sign-flip p is exact (1 two-sided);
* all deltas zero -- mean 0, CI ``[0, 0]``, p = 1 (sign flip and Wilcoxon).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
import numpy as np
import numpy.typing as npt

from groundtrace.analyzer.errors import InputError

from ._bootstrap import bootstrap_mean_ci
from ._settings import Alternative, StatsSettings
from ._signflip import sign_flip_pvalues
from ._wilcoxon import WILCOXON_METHOD, wilcoxon_test

__all__ = [
    "BOOTSTRAP_METHOD",
    "DeltaSummary",
    "PairedSummary",
    "summarise_deltas",
    "summarise_paired",
]

#: Method recorded for the confidence interval.
BOOTSTRAP_METHOD = "paired percentile bootstrap over items of the mean delta"

#: Relative size below which a paired difference is float rounding, not a measured effect
#: (``0.1 - 0.09999999999999998``): such a delta counts as exactly 0.
FLOAT_NOISE = 1e-12

FloatArray = npt.NDArray[np.float64]
ArrayLikeFloat = npt.ArrayLike


class DeltaSummary(msgspec.Struct, frozen=True):
    """Mean of one paired delta vector with its CI and tests; records how it was computed.

    Attributes:
        label: the vector's name (e.g. ``"REMOVE/correctness"``).
        n: items with an observed delta.
        n_missing: items whose delta was missing (not computed, never counted as 0).
        mean: mean delta, ``None`` when ``n == 0``.
        ci_low: lower percentile bound, ``None`` when ``n == 0``.
        ci_high: upper percentile bound, ``None`` when ``n == 0``.
        confidence: level of the interval.
        alternative: direction of both tests.
        p_value: sign-flip permutation p-value, ``None`` when ``n == 0``.
        p_method: how ``p_value`` was computed.
        wilcoxon_statistic: Wilcoxon ``T`` (``None`` when nothing to rank).
        wilcoxon_p: Wilcoxon p-value, ``None`` when ``n == 0``.
        wilcoxon_method: how the cross-check was computed.
        n_resamples: bootstrap resamples B.
        seed: seed of the bootstrap index matrix.
        n_permutations: sign vectors used (``2**n`` when enumerated exactly).
        permutation_seed: seed of the sign matrix (``None`` when enumerated exactly).
        method: how the interval was computed.
        note: the edge case that applied, if any.
    """

    label: str
    n: int
    n_missing: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    alternative: Alternative
    p_value: float | None
    p_method: str
    wilcoxon_statistic: float | None
    wilcoxon_p: float | None
    wilcoxon_method: str
    n_resamples: int
    seed: int
    n_permutations: int
    permutation_seed: int | None
    method: str = BOOTSTRAP_METHOD
    note: str | None = None

    @property
    def ci_excludes_zero(self) -> bool:
        """Whether the interval lies strictly on one side of 0 (``False`` when ``n == 0``)."""
        if self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_low > 0.0 or self.ci_high < 0.0


class PairedSummary(msgspec.Struct, frozen=True):
    """Means per condition plus the summary of their paired difference.

    Attributes:
        label: the vector's name.
        mean_original: mean on the original traces over the paired items (``None`` if none).
        mean_counterfactual: mean on the counterfactual traces over the same items.
        delta: summary of ``original - counterfactual``.
    """

    label: str
    mean_original: float | None
    mean_counterfactual: float | None
    delta: DeltaSummary


def _as_vector(label: str, values: ArrayLikeFloat) -> FloatArray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"not a numeric vector: {exc}", field=label) from exc
    if array.ndim != 1:
        raise InputError(f"expected a 1-D vector, got shape {array.shape}", field=label)
    if np.any(np.isinf(array)):
        raise InputError("infinite value in deltas", field=label)
    return array


def _empty(
    label: str, n_missing: int, alternative: Alternative, settings: StatsSettings
) -> DeltaSummary:
    return DeltaSummary(
        label=label,
        n=0,
        n_missing=n_missing,
        mean=None,
        ci_low=None,
        ci_high=None,
        confidence=settings.confidence,
        alternative=alternative,
        p_value=None,
        p_method="not computed: no observed items",
        wilcoxon_statistic=None,
        wilcoxon_p=None,
        wilcoxon_method=WILCOXON_METHOD,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
        n_permutations=0,
        permutation_seed=None,
        note="n = 0: nothing measured",
    )


def _note(column: FloatArray) -> str | None:
    if column.shape[0] == 1:
        return "n = 1: CI degenerate [d, d]; sign-flip p exact"
    if not np.any(column != 0.0):
        return "all deltas zero: CI [0, 0], p = 1"
    return None


def summarise_deltas(
    deltas: Mapping[str, ArrayLikeFloat],
    settings: StatsSettings | None = None,
    alternative: Alternative | Mapping[str, Alternative] = "two-sided",
) -> dict[str, DeltaSummary]:
    """Summarise several per-item delta vectors at once (vectorised).

    Args:
        deltas: label -> per-item deltas (NaN marks a missing item). Vectors may differ in
            length; vectors of equal length and missingness share their resampling matrices.
        settings: B, seeds and confidence (SPEC defaults when omitted).
        alternative: one direction for all vectors, or per label (e.g. ``"greater"`` for the
            non-negative divergence D, SPEC 4.2.2).

    Returns:
        label -> :class:`DeltaSummary`, in the order of ``deltas``.

    Raises:
        InputError: a vector is not 1-D numeric or contains an infinity.
    """
    settings = settings or StatsSettings()
    vectors = {label: _as_vector(label, values) for label, values in deltas.items()}
    sides = {
        label: alternative if isinstance(alternative, str) else alternative.get(label, "two-sided")
        for label in vectors
    }
    groups: dict[tuple[int, bytes, Alternative], list[str]] = {}
    results: dict[str, DeltaSummary] = {}
    for label, vector in vectors.items():
        observed = ~np.isnan(vector)
        if not observed.any():
            results[label] = _empty(label, vector.shape[0], sides[label], settings)
            continue
        key = (vector.shape[0], np.packbits(observed).tobytes(), sides[label])
        groups.setdefault(key, []).append(label)
    for (_, _, side), labels in groups.items():
        observed = ~np.isnan(vectors[labels[0]])
        matrix = np.column_stack([vectors[label][observed] for label in labels])
        means, lows, highs = bootstrap_mean_ci(
            matrix, settings.n_resamples, settings.seed, settings.confidence
        )
        p_values, used, exact, p_method = sign_flip_pvalues(
            matrix,
            settings.n_permutations,
            settings.permutation_seed,
            side,
            exact=settings.exact_permutation,
        )
        for j, label in enumerate(labels):
            column = matrix[:, j]
            w_stat, w_p, w_method = wilcoxon_test(column, side)
            results[label] = DeltaSummary(
                label=label,
                n=int(column.shape[0]),
                n_missing=int((~observed).sum()),
                mean=float(means[j]),
                ci_low=float(lows[j]),
                ci_high=float(highs[j]),
                confidence=settings.confidence,
                alternative=side,
                p_value=float(p_values[j]),
                p_method=p_method,
                wilcoxon_statistic=w_stat,
                wilcoxon_p=w_p,
                wilcoxon_method=w_method,
                n_resamples=settings.n_resamples,
                seed=settings.seed,
                n_permutations=used,
                permutation_seed=None if exact else settings.permutation_seed,
                note=_note(column),
            )
    return {label: results[label] for label in vectors}


def summarise_paired(
    original: Mapping[str, ArrayLikeFloat],
    counterfactual: Mapping[str, ArrayLikeFloat],
    settings: StatsSettings | None = None,
    alternative: Alternative | Mapping[str, Alternative] = "two-sided",
) -> dict[str, PairedSummary]:
    """Means per condition and the summary of ``original - counterfactual`` per label.

    Items missing on either side (NaN) are dropped pairwise; the condition means are taken
    over the same paired items as the delta.

    Args:
        original: label -> per-item values on the original traces U_k(tau).
        counterfactual: label -> per-item values on the counterfactual traces U_k(tau~);
            same labels and lengths as ``original``.
        settings: B, seeds and confidence.
        alternative: direction of the tests (see :func:`summarise_deltas`).

    Raises:
        InputError: labels or lengths differ, or a vector is malformed.
    """
    if set(original) != set(counterfactual):
        raise InputError(
            f"labels differ: {sorted(set(original) ^ set(counterfactual))}", field="labels"
        )
    deltas: dict[str, FloatArray] = {}
    condition_means: dict[str, tuple[float | None, float | None]] = {}
    for label in original:
        before = _as_vector(label, original[label])
        after = _as_vector(label, counterfactual[label])
        if before.shape != after.shape:
            raise InputError(
                f"original has {before.shape[0]} items, counterfactual {after.shape[0]}",
                field=label,
            )
        delta = before - after
        # a difference at the last bits of two equal scores computed two ways is no effect
        delta[np.abs(delta) <= FLOAT_NOISE * np.maximum(1.0, np.abs(before))] = 0.0
        deltas[label] = delta
        paired = ~np.isnan(delta)
        if paired.any():
            condition_means[label] = (float(before[paired].mean()), float(after[paired].mean()))
        else:
            condition_means[label] = (None, None)
    summaries = summarise_deltas(deltas, settings, alternative)
    return {
        label: PairedSummary(
            label=label,
            mean_original=condition_means[label][0],
            mean_counterfactual=condition_means[label][1],
            delta=summaries[label],
        )
        for label in original
    }
