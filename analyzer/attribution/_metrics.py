"""How good an attribution is, measured with the scorer itself.

* :func:`top_k_drop`: the answer's log-probability lost when the k top-scored sources are
  removed (ContextCite's top-k log-probability drop; higher is better);
* :func:`lds`: the linear datamodeling score: Spearman correlation between the attribution's
  prediction (the sum of the kept sources' scores) and the answer's log-probability over
  held-out random ablations (higher is better);
* :func:`spearman`: rank agreement of two attributions (e.g. against exact Shapley);
* :func:`compare`: the paired bootstrap interval of the per-item difference of a metric
  between two methods (the project's :func:`~groundtrace.analyzer.stats.summarise_deltas`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as scipy_stats

from groundtrace.analyzer.stats import DeltaSummary, StatsSettings, summarise_deltas

from ._methods import Attribution, MaskScorer, random_masks

__all__ = ["compare", "context_dependence", "lds", "spearman", "top_k_drop"]


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (NaN when either side is constant or shorter than 2)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values against {len(b)}")
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(scipy_stats.spearmanr(a, b).statistic)


def top_k_drop(score: MaskScorer, attribution: Attribution, k: int) -> float:
    """``log p(full) - log p(full without the k top-scored sources)``."""
    n = len(attribution.scores)
    top = set(attribution.ranking()[: min(k, n)])
    (ablated,) = score([tuple(i not in top for i in range(n))])
    return attribution.full - ablated


def lds(score: MaskScorer, attribution: Attribution, *, n_masks: int = 32, seed: int = 1) -> float:
    """Spearman between the predicted and the actual log-probability on held-out random
    ablations (each source kept with p = 0.5; draw them with a seed the method did not use)."""
    n = len(attribution.scores)
    masks = random_masks(n, n_masks, seed)
    actual = score(masks)
    weights = np.array(attribution.scores)
    predicted = [float(np.array(m, dtype=np.float64) @ weights) for m in masks]
    return spearman(predicted, actual)


def context_dependence(score: MaskScorer, k: int) -> float:
    """``log p(full) - log p(no source at all)``: how much the answer needs its context (an
    answer with a gap under 1 nat does not depend on it)."""
    full, empty = score([(True,) * k, (False,) * k])
    return full - empty


def compare(
    label: str, ours: Sequence[float], theirs: Sequence[float], settings: StatsSettings
) -> DeltaSummary:
    """Mean per-item difference ``ours - theirs`` with its paired bootstrap interval (NaN
    marks an item without a value)."""
    if len(ours) != len(theirs):
        raise ValueError(f"{len(ours)} items against {len(theirs)}")
    delta = np.array(ours, dtype=np.float64) - np.array(theirs, dtype=np.float64)
    return summarise_deltas({label: delta}, settings)[label]
