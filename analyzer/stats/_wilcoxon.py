"""Wilcoxon signed-rank test (scipy) as a cross-check of the sign-flip p-value."""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from ._settings import Alternative

__all__ = ["WILCOXON_METHOD", "wilcoxon_test"]

#: How the cross-check is computed (recorded with every result).
WILCOXON_METHOD = "scipy.stats.wilcoxon(zero_method='wilcox', method='auto')"


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
    if not np.any(deltas != 0.0):
        return None, 1.0, f"{WILCOXON_METHOD}; no non-zero delta, p = 1 by definition"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = sps.wilcoxon(deltas, zero_method="wilcox", alternative=alternative)
    return float(result.statistic), float(result.pvalue), WILCOXON_METHOD
