"""Attribution methods: pure and model-agnostic.

Each method takes ``score``, a callable mapping a list of masks (one flag per source, True
keeps it) to the answer's log-probability under each, and returns an :class:`Attribution`:
one score per source (higher: the answer depends on it more) with the number of distinct
ablations the method asked for (its passes; the content-addressed cache may have served some).

* :func:`leave_one_out`: ``log p(full) - log p(full without i)``; k + 1 passes;
* :func:`hierarchical`: each group (evidence item) left out, random half masks over the
  sentences, a cross-validated Lasso surrogate fitted on every row, two candidate top-3 sets
  checked by measurement, within a pass budget (24 by default);
* :func:`exact_shapley`: Shapley values of ``log p`` over all ``2**k`` subsets, k <= 6;
* :func:`context_cite`: ContextCite's protocol: random masks keeping each source with
  p = 0.5 (one seed per mask), a Lasso (alpha 0.01 on standardised masks, target the logit
  of the response probability divided by the answer's token count, as the reference
  implementation) whose weights are the scores. The Lasso is a small coordinate descent in
  numpy (one implementation; a test checks it against scikit-learn's ``Lasso``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
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
        seed: the seed of the random masks (``contextcite``, ``hierarchical``), else None.
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
    score: MaskScorer, groups: Sequence[Sequence[int]], *, max_passes: int = 24, seed: int = 0
) -> Attribution:
    """Items first, then a surrogate over the sentences; its top three settled by measurement.

    The groups (an evidence item's sentences) partition the ``k`` sources. Within
    ``max_passes`` distinct ablations (passes), in this order:

    1. the full prompt and each group left out (``1 + len(groups)``; with a smaller budget,
       the first groups in prompt order);
    2. random masks keeping each source with p = 0.5, mask ``j`` drawn from ``(seed, j)`` as
       :func:`context_cite` draws them: the budget's remainder after step 4's passes (with
       the default budget and 3 groups, 18 masks);
    3. a linear surrogate fitted on every row: a Lasso on the standardised masks, target the
       logit of the answer's probability, its penalty chosen by 5-fold cross-validation over
       the rows other than the full prompt; its ties (such as the weights the Lasso set to 0)
       broken by the same Lasso with the grid's smallest penalty;
    4. the top three by measurement (``SET_CHECKS`` = 2 passes when ``k > 3``): the
       surrogate's three best sources removed together, and the three best of the
       smallest-penalty Lasso (or, when they are the same three, the surrogate's best two
       with its fourth); the set whose removal lost more is the top three.

    The scores are the surrogate refitted on every row measured, the chosen three lifted just
    enough to rank first (in the refitted order). The group rows carry the item level; the
    random rows see a sentence's effect when others are gone too, which leave-one-out misses
    when two sentences carry the same fact (both score about 0 under leave-one-out).

    Args:
        score: the mask scorer over all sources.
        groups: the source indices of each group.
        max_passes: the distinct ablations at most (at least 1).
        seed: seed of the random masks.
    """
    k = sum(len(g) for g in groups)
    if sorted(i for g in groups for i in g) != list(range(k)):
        raise ConfigError("the groups must partition the sources", field="groups")
    if max_passes < 1:
        raise ConfigError(f"max_passes must be at least 1, got {max_passes}", field="max_passes")
    counted = _Counted(score)
    rows: dict[Mask, float] = {}

    def measure(masks: Sequence[Mask]) -> list[float]:
        room = max_passes - len(counted.asked)
        fresh = [m for m in dict.fromkeys(masks) if m not in counted.asked][: max(room, 0)]
        if fresh:
            rows.update(zip(fresh, counted(fresh), strict=True))
        return [rows.get(m, math.nan) for m in masks]

    (full,) = measure([_without(k, [])])
    measure([_without(k, g) for g in groups])
    checks = SET_CHECKS if k > 3 else 0
    measure(random_masks(k, max(max_passes - len(counted.asked) - checks, 0), seed))
    chosen: list[int] = []
    if checks:
        fitted, dense = _surrogate(rows, k), _surrogate(rows, k, ALPHA_FRACTIONS[-1])
        first = sorted(range(k), key=lambda i: (-fitted[i], -dense[i], i))
        second = sorted(range(k), key=lambda i: (-dense[i], -fitted[i], i))[:3]
        if set(second) == set(first[:3]):
            second = [*first[:2], first[3]]
        chosen = _best(full, measure, k, [first[:3], second])
    weights = _surrogate(rows, k)
    dense = _surrogate(rows, k, ALPHA_FRACTIONS[-1])
    chosen.sort(key=lambda i: (-weights[i], -dense[i], i))
    return Attribution("hierarchical", _lifted(weights, chosen), len(counted.asked), full, seed)


#: :func:`hierarchical` measures ``SET_CHECKS`` candidate top-3 sets.
SET_CHECKS = 2


def _best(
    full: float,
    measure: Callable[[Sequence[Mask]], list[float]],
    k: int,
    sets: Sequence[list[int]],
) -> list[int]:
    """The set whose removal lost most (ties: the first), [] when none was measured."""
    lost = [full - v for v in measure([_without(k, s) for s in sets])]
    found = [(d, -n) for n, d in enumerate(lost) if not math.isnan(d)]
    return list(sets[-max(found)[1]]) if found else []


#: Lasso penalties :func:`hierarchical` cross-validates, as fractions of the smallest
#: penalty that zeroes every weight.
ALPHA_FRACTIONS = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005)

_FOLDS = 5


def _fit(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], alpha: float
) -> tuple[npt.NDArray[np.float64], float]:
    """Lasso on standardised columns, mapped back: weights and intercept on raw masks."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0.0] = 1.0
    w, b = lasso((x - mean) / scale, y, alpha, iterations=2_000, tol=1e-8)
    return w / scale, b - float((mean / scale) @ w)


def _surrogate(
    rows: Mapping[Mask, float], k: int, fraction: float | None = None
) -> npt.NDArray[np.float64]:
    """Per-source weights of a Lasso of the answer's logit on the measured masks, its
    penalty ``fraction`` of the smallest one that zeroes every weight, or (None) chosen
    among :data:`ALPHA_FRACTIONS` by 5-fold cross-validation over the rows other than the
    full prompt."""
    masks = list(rows)
    x = np.array(masks, dtype=np.float64).reshape(len(masks), k)
    y = np.array([logit(min(rows[m], -1e-9)) for m in masks])
    xs = (x - x.mean(axis=0)) / np.where(x.std(axis=0) == 0.0, 1.0, x.std(axis=0))
    top = float(np.max(np.abs(xs.T @ (y - y.mean())))) / len(y) if len(y) > 1 else 0.0
    if top == 0.0:
        return np.zeros(k)
    held = [n for n, m in enumerate(masks) if not all(m)]
    alphas = [top * f for f in ALPHA_FRACTIONS]
    if fraction is not None:
        alpha = top * fraction
    elif len(held) >= _FOLDS:
        errors = []
        for alpha in alphas:
            error = 0.0
            for fold in range(_FOLDS):
                out = held[fold::_FOLDS]
                keep = [n for n in range(len(y)) if n not in out]
                w, b = _fit(x[keep], y[keep], alpha)
                error += float(((x[out] @ w + b - y[out]) ** 2).sum())
            errors.append(error)
        alpha = alphas[int(np.argmin(errors))]
    else:
        alpha = alphas[len(alphas) // 2]
    return _fit(x, y, alpha)[0]


def _lifted(weights: npt.NDArray[np.float64], chosen: Sequence[int]) -> tuple[float, ...]:
    """The weights with ``chosen`` raised just enough to rank first, in that order."""
    scores = [float(w) for w in weights]
    rest = [scores[i] for i in range(len(scores)) if i not in set(chosen)]
    floor = max(rest) if rest else -math.inf
    for i in reversed(chosen):
        if scores[i] <= floor:
            scores[i] = floor + 1e-6 * max(1.0, abs(floor))
        floor = scores[i]
    return tuple(scores)


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
