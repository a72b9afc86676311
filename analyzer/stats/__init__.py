"""Seeded, vectorised statistics shared by every analysis.

Usage::

    from groundtrace.analyzer.stats import bootstrap_indices

    idx = bootstrap_indices(n=200, n_resamples=5000, seed=42)  # (5000, 200) int matrix
"""

from __future__ import annotations

from ._resample import bootstrap_indices, percentile_interval

__all__ = ["bootstrap_indices", "percentile_interval"]
