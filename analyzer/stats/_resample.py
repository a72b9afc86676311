"""Bootstrap index matrices, computed once per (n, B, seed) and reused for every statistic.

Besides the index matrix itself this module caches two derived matrices that make paired
statistics a single matrix product:

* :func:`bootstrap_counts` -- how often each item is drawn in each resample, so the
  resampled means of ``m`` delta vectors at once are ``counts @ deltas / n``;
* :func:`sign_flip_matrix` -- the +/-1 sign matrix of a paired sign-flip permutation test
  (Monte Carlo, from its own seeded stream, or the exact enumeration of all ``2**n`` flips).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "SIGN_STREAM",
    "SUM_CHUNK_CELLS",
    "bootstrap_counts",
    "bootstrap_indices",
    "bootstrap_sums",
    "exact_sign_matrix",
    "percentile_interval",
    "sign_flip_matrix",
]

#: Spawn key of the sign-flip stream: signs come from ``SeedSequence(seed, spawn_key=(1,))``
#: so a shared seed never correlates the sign matrix with the bootstrap index matrix.
SIGN_STREAM: tuple[int] = (1,)

#: Largest n for which the exact sign matrix (2**n rows) may be built.
_EXACT_MAX_N = 20
#: Draws (resamples x items) :func:`bootstrap_sums` holds at once: about 16 MB.
SUM_CHUNK_CELLS = 1 << 20


@lru_cache(maxsize=32)
def _indices(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.intp]:
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, n, size=(n_resamples, n), dtype=np.intp)
    matrix.setflags(write=False)
    return matrix


def bootstrap_indices(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.intp]:
    """Resampling indices with replacement, shape ``(n_resamples, n)``, read-only.

    The same ``(n, n_resamples, seed)`` always yields the same matrix (cached), so paired
    statistics over several axes or operators share their resamples, as the SPEC requires.

    Args:
        n: number of items (must be >= 1).
        n_resamples: number of bootstrap resamples B (must be >= 1).
        seed: seed of the ``numpy.random.Generator`` (PCG64).
    """
    if n < 1 or n_resamples < 1:
        raise ValueError(f"bootstrap needs n >= 1 and n_resamples >= 1, got {n}, {n_resamples}")
    return _indices(n, n_resamples, seed)


@lru_cache(maxsize=32)
def _counts(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.float64]:
    idx = _indices(n, n_resamples, seed)
    offsets = (np.arange(n_resamples, dtype=np.intp) * n)[:, None]
    flat = np.bincount((idx + offsets).ravel(), minlength=n_resamples * n)
    matrix = flat.reshape(n_resamples, n).astype(np.float64)
    matrix.setflags(write=False)
    return matrix


def bootstrap_counts(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """Draw counts of the index matrix, shape ``(n_resamples, n)``, read-only.

    ``counts[b, i]`` is how many times item ``i`` appears in resample ``b`` of
    :func:`bootstrap_indices` with the same arguments, so ``counts @ x / n`` equals
    ``x[bootstrap_indices(n, B, seed)].mean(axis=1)`` (up to floating-point rounding) for
    every column of ``x`` at once.

    Args:
        n: number of items (must be >= 1).
        n_resamples: number of bootstrap resamples B (must be >= 1).
        seed: seed of the index matrix.
    """
    if n < 1 or n_resamples < 1:
        raise ValueError(f"bootstrap needs n >= 1 and n_resamples >= 1, got {n}, {n_resamples}")
    return _counts(n, n_resamples, seed)


def bootstrap_sums(
    values: npt.NDArray[np.float64], n_resamples: int, seed: int
) -> npt.NDArray[np.float64]:
    """Each resample's sum of ``values`` (integer-valued: counts, flags), in bounded memory.

    ``values`` of shape ``(n, k)`` sums ``k`` columns over the same resamples (a ratio's
    numerator and denominator, paired), giving shape ``(n_resamples, k)``.

    The resamples are those of :func:`bootstrap_indices` with the same ``(n, n_resamples,
    seed)``, drawn from the same generator stream a chunk of rows at a time (at most
    :data:`SUM_CHUNK_CELLS` draws held, nothing cached), so memory does not grow with ``n``
    times ``n_resamples``. Sums of integers below 2**53 are exact in any order, so the result
    equals ``bootstrap_counts(n, n_resamples, seed) @ values`` bit for bit.

    Args:
        values: shape ``(n,)`` or ``(n, k)``, ``n >= 1``, every value an integer.
        n_resamples: number of bootstrap resamples B (must be >= 1).
        seed: seed of the resamples.

    Raises:
        ValueError: ``n`` or ``n_resamples`` below 1, or a value that is not an integer.
    """
    n = values.shape[0]
    if n < 1 or n_resamples < 1:
        raise ValueError(f"bootstrap needs n >= 1 and n_resamples >= 1, got {n}, {n_resamples}")
    if not np.array_equal(values, np.round(values)):
        raise ValueError("bootstrap_sums needs integer values (its sums must be exact)")
    rng = np.random.default_rng(seed)
    rows = max(1, SUM_CHUNK_CELLS // values.size)
    sums = np.empty((n_resamples, *values.shape[1:]), dtype=np.float64)
    for start in range(0, n_resamples, rows):
        drawn = rng.integers(0, n, size=(min(rows, n_resamples - start), n), dtype=np.intp)
        sums[start : start + drawn.shape[0]] = values[drawn].sum(axis=1)
    return sums


@lru_cache(maxsize=32)
def _signs(n: int, n_permutations: int, seed: int) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=SIGN_STREAM))
    # One random byte gives eight independent fair signs.
    packed = rng.integers(0, 256, size=(n_permutations, -(-n // 8)), dtype=np.uint8)
    bits = np.unpackbits(packed, axis=1, count=n)
    matrix = bits.astype(np.float64)
    matrix *= 2.0
    matrix -= 1.0
    matrix.setflags(write=False)
    return matrix


def sign_flip_matrix(n: int, n_permutations: int, seed: int) -> npt.NDArray[np.float64]:
    """Random +/-1 signs, shape ``(n_permutations, n)``, read-only and cached.

    Drawn from ``SeedSequence(seed, spawn_key=SIGN_STREAM)``, independent of the bootstrap
    index matrix of the same seed.

    Args:
        n: number of paired items (must be >= 1).
        n_permutations: number of random sign vectors B (must be >= 1).
        seed: the recorded seed.
    """
    if n < 1 or n_permutations < 1:
        raise ValueError(
            f"sign flips need n >= 1 and n_permutations >= 1, got {n}, {n_permutations}"
        )
    return _signs(n, n_permutations, seed)


@lru_cache(maxsize=16)
def _exact_signs(n: int) -> npt.NDArray[np.float64]:
    codes = np.arange(2**n, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1
    matrix = (2 * bits - 1).astype(np.float64)
    matrix.setflags(write=False)
    return matrix


def exact_sign_matrix(n: int) -> npt.NDArray[np.float64]:
    """All ``2**n`` sign vectors (the identity included), shape ``(2**n, n)``, read-only.

    Args:
        n: number of paired items, ``1 <= n <= 20``.
    """
    if not 1 <= n <= _EXACT_MAX_N:
        raise ValueError(f"exact sign enumeration needs 1 <= n <= {_EXACT_MAX_N}, got {n}")
    return _exact_signs(n)


def percentile_interval(
    replicates: npt.NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates (last axis reduced when 2-D)."""
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=-1)
    return float(low), float(high)
