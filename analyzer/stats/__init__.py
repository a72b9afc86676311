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

from groundtrace.analyzer._deprecation import renamed

from ._resample import bootstrap_counts, bootstrap_indices, bootstrap_sums, percentile_interval
from ._settings import StatsSettings
from ._summary import DeltaSummary, PairedSummary, summarise_deltas, summarise_paired

__all__ = [
    "DeltaSummary",
    "PairedSummary",
    "StatsSettings",
    "bootstrap_counts",
    "bootstrap_indices",
    "bootstrap_sums",
    "percentile_interval",
    "summarise_deltas",
    "summarise_paired",
]

_AGREEMENT = ("Statistic", "auroc_batch", "bootstrap_statistic", "cohen_kappa_batch",
              "mcc_batch", "raw_agreement_batch")  # fmt: skip

#: The summaries' parts and constants, no longer public (0.2.0): importable from here for one
#: release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "Alternative": f"{__name__}._settings.Alternative",
        # the agreement statistics the judge and the audit share (groundtrace.analyzer._agreement)
        **{name: f"groundtrace.analyzer._agreement.{name}" for name in _AGREEMENT},
        "BOOTSTRAP_METHOD": f"{__name__}._summary.BOOTSTRAP_METHOD",
        "SIGN_STREAM": f"{__name__}._resample.SIGN_STREAM",
        "WILCOXON_METHOD": f"{__name__}._wilcoxon.WILCOXON_METHOD",
        "bootstrap_mean_ci": f"{__name__}._bootstrap.bootstrap_mean_ci",
        "bootstrap_means": f"{__name__}._bootstrap.bootstrap_means",
        "sign_flip_pvalues": f"{__name__}._signflip.sign_flip_pvalues",
        "wilcoxon_test": f"{__name__}._wilcoxon.wilcoxon_test",
    },
    since="0.2.0",
    remove_in="0.3.0",
)
