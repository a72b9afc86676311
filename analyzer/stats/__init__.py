"""Seeded, vectorised statistics shared by every analysis (SPEC 4.2.2).

Usage::

    from groundtrace.analyzer.stats import StatsSettings, summarise_paired

    out = summarise_paired(
        {"REMOVE/correctness": [1, 1, 0, 1]},  # U_k(tau) per item
        {"REMOVE/correctness": [0, 1, 0, 0]},  # U_k(tau~) per item
        StatsSettings(n_resamples=5000, seed=42),
    )
    s = out["REMOVE/correctness"].delta  # mean, ci_low, ci_high, p_value, wilcoxon_p, seed, n...
"""

from __future__ import annotations

from ._bootstrap import bootstrap_mean_ci, bootstrap_means
from ._resample import (
    SIGN_STREAM,
    bootstrap_counts,
    bootstrap_indices,
    bootstrap_sums,
    percentile_interval,
)
from ._settings import Alternative, StatsSettings
from ._signflip import sign_flip_pvalues
from ._summary import (
    BOOTSTRAP_METHOD,
    DeltaSummary,
    PairedSummary,
    summarise_deltas,
    summarise_paired,
)
from ._wilcoxon import WILCOXON_METHOD, wilcoxon_test

__all__ = [
    "BOOTSTRAP_METHOD",
    "SIGN_STREAM",
    "WILCOXON_METHOD",
    "Alternative",
    "DeltaSummary",
    "PairedSummary",
    "StatsSettings",
    "bootstrap_counts",
    "bootstrap_indices",
    "bootstrap_mean_ci",
    "bootstrap_means",
    "bootstrap_sums",
    "percentile_interval",
    "sign_flip_pvalues",
    "summarise_deltas",
    "summarise_paired",
    "wilcoxon_test",
]
