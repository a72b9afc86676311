"""Bootstrap index matrices, computed once per (n, B, seed) and reused for every statistic."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = ["bootstrap_indices", "percentile_interval"]


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


def percentile_interval(
    replicates: npt.NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates (last axis reduced when 2-D)."""
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=-1)
    return float(low), float(high)
