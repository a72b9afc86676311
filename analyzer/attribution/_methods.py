"""Attribution methods: pure and model-agnostic.

Each method takes ``score``, a callable mapping a list of masks (one flag per source, True
keeps it) to the answer's log-probability under each, and returns an :class:`Attribution`:
one score per source (higher: the answer depends on it more) with the number of distinct
ablations the method asked for (its passes; the content-addressed cache may have served some).

* :func:`leave_one_out`: ``log p(full) - log p(full without i)``; k + 1 passes;
* :func:`hierarchical`: leave-one-out over groups (evidence items), then over the sentences of
  the top groups, within a pass budget (AttriBoT's paragraph-then-sentence search);
* :func:`exact_shapley`: Shapley values of ``log p`` over all ``2**k`` subsets, k <= 6;
* :func:`context_cite`: ContextCite's protocol: random masks keeping each source with
  p = 0.5 (one seed per mask), a Lasso (alpha 0.01 on standardised masks, target the logit
  of the response probability divided by the answer's token count, as the reference
  implementation) whose weights are the scores. The Lasso is a small coordinate descent in
  numpy (one implementation; a test checks it against scikit-learn's ``Lasso``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from groundtrace.analyzer._shapley import coalitions, shapley
from groundtrace.analyzer.errors import ConfigError

from ._context import Mask
from ._scorer import logit

__all__ = [
    "MAX_SHAPLEY_SOURCES",
    "Attribution",
    "MaskScorer",
    "context_cite",
    "exact_shapley",
    "hierarchical",
    "lasso",
    "leave_one_out",
    "random_masks",
]

#: Scores the answer under each mask: ``log p(answer | prompt with the kept sources)``.
MaskScorer = Callable[[Sequence[Mask]], list[float]]

#: Exact Shapley values enumerate ``2**k`` ablations; beyond 6 sources that is too many.
MAX_SHAPLEY_SOURCES = 6


@dataclass(frozen=True, slots=True)
class Attribution:
    """One method's scores for the sources of one answer.

    Attributes:
        method: ``leave-one-out``, ``hierarchical``, ``shapley`` or ``contextcite``.
        scores: per source; higher means the answer's log-probability depends on it more.
        passes: distinct ablations the method asked the scorer for.
        full: the answer's log-probability with every source kept.
        seed: the seed of the random masks (``contextcite``), else None.
    """

    method: str
    scores: tuple[float, ...]
    passes: int
    full: float
    seed: int | None = None

    def ranking(self) -> list[int]:
        """Source indices from the highest score to the lowest (ties: prompt order)."""
        return sorted(range(len(self.scores)), key=lambda i: (-self.scores[i], i))


class _Counted:
    """Counts the distinct masks asked for (the passes of one method)."""

    def __init__(self, score: MaskScorer) -> None:
        self._score = score
        self.asked: set[Mask] = set()

    def __call__(self, masks: Sequence[Mask]) -> list[float]:
        masks = [tuple(bool(x) for x in m) for m in masks]
        self.asked.update(masks)
        return self._score(masks)


def _without(k: int, dropped: Sequence[int]) -> Mask:
    drop = set(dropped)
    return tuple(i not in drop for i in range(k))


def leave_one_out(score: MaskScorer, k: int) -> Attribution:
    """``log p(full) - log p(full without source i)`` for each source (k + 1 passes)."""
    counted = _Counted(score)
    full, *dropped = counted([_without(k, [])] + [_without(k, [i]) for i in range(k)])
    return Attribution("leave-one-out", tuple(full - d for d in dropped), len(counted.asked), full)


def hierarchical(
    score: MaskScorer, groups: Sequence[Sequence[int]], *, max_passes: int | None = None
) -> Attribution:
    """Leave-one-out over groups, then over the sources inside the top groups.

    The groups (an evidence item's sentences) partition the sources. The groups are ranked by
    their leave-one-out score; the sources of the best groups are then each left out, group
    after group while the pass budget allows. A source in a group not opened gets an equal
    share of its group's score.

    Args:
        score: the mask scorer over all sources.
        groups: the source indices of each group.
        max_passes: pass budget (default: open the top group only).
    """
    k = sum(len(g) for g in groups)
    if sorted(i for g in groups for i in g) != list(range(k)):
        raise ConfigError("the groups must partition the sources", field="groups")
    counted = _Counted(score)
    full, *dropped = counted([_without(k, [])] + [_without(k, g) for g in groups])
    group_scores = [full - d for d in dropped]
    scores = [0.0] * k
    for group, value in zip(groups, group_scores, strict=True):
        for i in group:
            scores[i] = value / len(group)
    order = sorted(range(len(groups)), key=lambda g: (-group_scores[g], g))
    budget = max_passes if max_passes is not None else 1 + len(groups) + len(groups[order[0]])
    for g in order:
        group = groups[g]
        if len(group) < 2:
            continue  # a one-source group's leave-one-out is its group score
        if len(counted.asked) + len(group) > budget:
            break
        values = counted([_without(k, [i]) for i in group])
        for i, value in zip(group, values, strict=True):
            scores[i] = full - value
    return Attribution("hierarchical", tuple(scores), len(counted.asked), full)


def exact_shapley(score: MaskScorer, k: int) -> Attribution:
    """Exact Shapley values of the answer's log-probability over all ``2**k`` subsets.

    ``phi_i = sum over S without i of |S|! (k - |S| - 1)! / k! * (v(S + i) - v(S))``, so the
    values sum to ``v(all) - v(empty)``.

    Raises:
        ConfigError: more than :data:`MAX_SHAPLEY_SOURCES` sources.
    """
    if k > MAX_SHAPLEY_SOURCES:
        raise ConfigError(
            f"exact Shapley values need k <= {MAX_SHAPLEY_SOURCES} sources, got {k}",
            field="sources",
        )
    counted = _Counted(score)
    v = counted(coalitions(k))
    return Attribution("shapley", tuple(shapley(v)), len(counted.asked), float(v[-1]))


def random_masks(k: int, n: int, seed: int, keep: float = 0.5) -> list[Mask]:
    """``n`` masks keeping each source with probability ``keep``; mask ``j`` is drawn from
    its own generator seeded ``(seed, j)``, so a mask does not depend on how many are drawn."""
    return [
        tuple(bool(x) for x in np.random.default_rng([seed, j]).random(k) < keep) for j in range(n)
    ]


def lasso(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    alpha: float,
    *,
    iterations: int = 10_000,
    tol: float = 1e-10,
) -> tuple[npt.NDArray[np.float64], float]:
    """Weights and intercept minimising ``||y - x w - b||^2 / (2 n) + alpha * |w|_1``.

    Cyclic coordinate descent on centred data (scikit-learn's objective, ``fit_intercept``).
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    n, k = xs.shape
    x_mean, y_mean = xs.mean(axis=0), float(ys.mean())
    xc, yc = xs - x_mean, ys - y_mean
    norms = (xc**2).sum(axis=0) / n
    w = np.zeros(k)
    residual = yc.copy()
    for _ in range(iterations):
        largest = 0.0
        for j in range(k):
            if norms[j] == 0.0:
                continue
            old = w[j]
            rho = float(xc[:, j] @ residual) / n + norms[j] * old
            w[j] = np.sign(rho) * max(abs(rho) - alpha, 0.0) / norms[j]
            if w[j] != old:
                residual -= xc[:, j] * (w[j] - old)
                largest = max(largest, abs(w[j] - old))
        if largest <= tol:
            break
    return w, y_mean - float(x_mean @ w)


def context_cite(
    score: MaskScorer,
    k: int,
    *,
    n_tokens: int,
    n_ablations: int = 32,
    seed: int = 0,
    alpha: float = 0.01,
) -> Attribution:
    """ContextCite's surrogate: Lasso weights of the response's logit-probability on random
    ablation masks.

    As the reference implementation: masks keep each source with p = 0.5; the target is
    ``logit(p(answer))`` divided by the answer's token count; the masks are standardised,
    the Lasso fitted with ``alpha``, and the weights mapped back to unstandardised masks and
    multiplied by the token count.

    Args:
        score: the mask scorer.
        k: sources.
        n_tokens: the answer's token count.
        n_ablations: random masks (ContextCite: 32 to 64).
        seed: seed of the masks (mask ``j`` from ``(seed, j)``).
        alpha: the Lasso's regularisation.
    """
    masks = random_masks(k, n_ablations, seed)
    counted = _Counted(score)
    targets = np.array([logit(v) for v in counted(masks)]) / n_tokens
    x = np.array(masks, dtype=np.float64)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0.0] = 1.0  # as StandardScaler: a constant column stays 0
    weights, _ = lasso((x - mean) / scale, targets, alpha)
    scores = weights / scale * n_tokens
    (full,) = score([_without(k, [])])
    return Attribution(
        "contextcite", tuple(float(s) for s in scores), len(counted.asked), full, seed
    )
