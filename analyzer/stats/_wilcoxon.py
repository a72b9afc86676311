"""Wilcoxon signed-rank test (scipy) as a cross-check of the sign-flip p-value."""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from ._settings import Alternative

__all__ = ["WILCOXON_METHOD", "wilcoxon_test"]

#: How the cross-check is computed (recorded with every result): exact null distribution for
#: n <= 50 without ties or zeros, else the normal approximation (with tie correction). scipy's
#: ``method='auto'`` switches to a permutation test on tied data, which costs minutes per call.
WILCOXON_METHOD = "scipy.stats.wilcoxon(zero_method='wilcox', method={method})"
_EXACT_MAX_N = 50


def wilcoxon_test(
    deltas: npt.NDArray[np.float64], alternative: Alternative = "two-sided"
) -> tuple[float | None, float, str]:
    """Wilcoxon signed-rank test of one complete delta vector.

    Zero deltas are discarded (``zero_method='wilcox'``). When no delta is non-zero there is
    nothing to rank: the result is ``(None, 1.0, ...)`` -- the data give no evidence of a
    shift -- and the method string says so.

    Args:
        deltas: 1-D complete delta vector.
        alternative: direction of the test.

    Returns:
        ``(statistic or None, p-value, method description)``.
    """
    from scipy import stats as sps  # here, not at import: scipy.stats costs ~1 s to load

    nonzero = deltas[deltas != 0.0]
    if nonzero.size == 0:
        label = WILCOXON_METHOD.format(method="'exact'")
        return None, 1.0, f"{label}; no non-zero delta, p = 1 by definition"
    magnitudes = np.abs(nonzero)
    tied = np.unique(magnitudes).size < magnitudes.size
    exact = nonzero.size == deltas.size and not tied and deltas.size <= _EXACT_MAX_N
    method = "exact" if exact else "approx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = sps.wilcoxon(deltas, zero_method="wilcox", alternative=alternative, method=method)
    return (
        float(result.statistic),
        float(result.pvalue),
        WILCOXON_METHOD.format(method=repr(method)),
    )
