"""Paired sign-flip permutation p-values, vectorised over many delta vectors (SPEC 4.2.2).

Under the null hypothesis each paired delta is symmetric about 0, so flipping its sign is
as likely as not. The statistic is the sum of the deltas (equivalently the mean, n fixed).

* Monte Carlo: ``p = (1 + #{b : T_b >= T_obs}) / (B + 1)`` over the cached sign matrix,
  i.e. the observed statistic is counted as one of the permutations (+1 correction), so
  ``p`` is never 0.
* Exact: when ``2**n <= B`` every sign vector is enumerated and ``p = #{T_s >= T_obs} / 2**n``
  (the identity is one of the vectors).

``T`` is ``|sum|`` for ``two-sided``, ``sum`` for ``greater`` and ``-sum`` for ``less``.
Ties are counted as at least as extreme (a tolerance of ``1e-9 * sum|d|`` absorbs rounding),
so all-zero deltas give ``p = 1``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._resample import exact_sign_matrix, sign_flip_matrix
from ._settings import Alternative

__all__ = ["sign_flip_pvalues"]

FloatArray = npt.NDArray[np.float64]


def _oriented(sums: FloatArray, alternative: Alternative) -> FloatArray:
    if alternative == "two-sided":
        return np.abs(sums)
    if alternative == "greater":
        return sums
    return -sums


def sign_flip_pvalues(
    deltas: FloatArray,
    n_permutations: int,
    seed: int,
    alternative: Alternative = "two-sided",
    *,
    exact: bool = True,
) -> tuple[FloatArray, int, bool, str]:
    """Sign-flip permutation p-value of the mean of each column of ``deltas``.

    Args:
        deltas: complete matrix ``(n, m)`` with ``n >= 1``.
        n_permutations: random sign vectors B (Monte Carlo path).
        seed: seed of the cached sign matrix.
        alternative: direction of the test.
        exact: enumerate all ``2**n`` sign vectors when ``2**n <= n_permutations``.

    Returns:
        ``(p_values (m,), number of sign vectors used, whether enumerated exactly, method)``.
    """
    n = deltas.shape[0]
    use_exact = exact and n <= 20 and 2**n <= n_permutations
    signs = exact_sign_matrix(n) if use_exact else sign_flip_matrix(n, n_permutations, seed)
    observed = _oriented(deltas.sum(axis=0), alternative)
    flipped = _oriented(signs @ deltas, alternative)
    tolerance = 1e-9 * np.abs(deltas).sum(axis=0)
    extreme = (flipped >= observed - tolerance).sum(axis=0)
    used = signs.shape[0]
    if use_exact:
        p = extreme / used
        method = f"sign-flip permutation, exact enumeration of 2**{n} = {used} sign vectors"
    else:
        p = (1.0 + extreme) / (used + 1.0)
        method = f"sign-flip permutation, Monte Carlo B = {used}, p = (1 + count) / (B + 1)"
    return np.minimum(p.astype(np.float64), 1.0), used, use_exact, method
