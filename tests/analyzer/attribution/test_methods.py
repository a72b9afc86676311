"""Attribution methods and metrics on synthetic scorers whose answer is known (seeded)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest

from groundtrace.analyzer.attribution._context import Mask
from groundtrace.analyzer.attribution._methods import (
    MaskScorer,
    context_cite,
    exact_shapley,
    hierarchical,
    lasso,
    leave_one_out,
    random_masks,
)
from groundtrace.analyzer.attribution._metrics import (
    compare,
    context_dependence,
    lds,
    spearman,
    top_k_drop,
)
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.stats import StatsSettings

WEIGHTS = [0.5, 3.0, -0.25, 1.25, 0.0, 2.0]


def additive(weights: Sequence[float], base: float = -12.0) -> MaskScorer:
    def score(masks: Sequence[Mask]) -> list[float]:
        return [base + sum(w for w, keep in zip(weights, m, strict=True) if keep) for m in masks]

    return score


def test_on_an_additive_scorer_loo_equals_shapley_equals_the_weights() -> None:
    score = additive(WEIGHTS)
    loo = leave_one_out(score, len(WEIGHTS))
    shapley = exact_shapley(score, len(WEIGHTS))
    assert loo.scores == pytest.approx(WEIGHTS, abs=1e-12)
    assert shapley.scores == pytest.approx(WEIGHTS, abs=1e-12)
    assert (loo.passes, shapley.passes) == (7, 64)
    assert loo.full == shapley.full == pytest.approx(-12.0 + sum(WEIGHTS))
    assert lds(score, loo, n_masks=32, seed=5) == pytest.approx(1.0)
    assert spearman(loo.scores, shapley.scores) == pytest.approx(1.0)
    assert top_k_drop(score, loo, 2) == pytest.approx(5.0)  # the 3.0 and the 2.0 sources


def test_contextcite_recovers_an_additive_scorer() -> None:
    score = additive(WEIGHTS)
    cite = context_cite(score, len(WEIGHTS), n_tokens=5, n_ablations=32, seed=3)
    assert cite.seed == 3 and cite.passes <= 33
    assert cite.ranking()[:2] == [1, 5]
    # the Lasso shrinks every weight by about alpha * n_tokens / var(mask) = 0.2
    assert np.allclose(cite.scores, WEIGHTS, atol=0.35)


def dominant(k: int, index: int, seed: int) -> MaskScorer:
    """One source worth 6 nats, small pairwise interactions between the others."""
    rng = np.random.default_rng(seed)
    pair = np.triu(rng.normal(0.0, 0.3, (k, k)), 1)
    single = rng.normal(0.0, 0.3, k)
    single[index] = 6.0

    def score(masks: Sequence[Mask]) -> list[float]:
        out = []
        for m in masks:
            x = np.array(m, dtype=np.float64)
            out.append(float(-15.0 + single @ x + x @ pair @ x))
        return out

    return score


@pytest.mark.parametrize("seed", range(5))
def test_every_method_ranks_one_dominant_source_first(seed: int) -> None:
    k, index = 6, seed % 6
    score = dominant(k, index, seed)
    groups = [[0, 1], [2, 3, 4], [5]]
    methods = [
        leave_one_out(score, k),
        exact_shapley(score, k),
        context_cite(score, k, n_tokens=4, n_ablations=32, seed=seed),
        hierarchical(score, groups, max_passes=24),
    ]
    for attribution in methods:
        assert attribution.ranking()[0] == index, attribution.method


def test_redundant_sources_split_the_credit_under_shapley_not_loo() -> None:
    def either(masks: Sequence[Mask]) -> list[float]:  # the answer needs source 0 or 1
        return [-10.0 + (4.0 if m[0] or m[1] else 0.0) for m in masks]

    loo = leave_one_out(either, 3)
    shapley = exact_shapley(either, 3)
    assert loo.scores == (0.0, 0.0, 0.0)
    assert shapley.scores == pytest.approx((2.0, 2.0, 0.0))
    assert math.isnan(spearman(loo.scores, shapley.scores))
    assert context_dependence(either, 3) == pytest.approx(4.0)


def test_shapley_is_efficient_on_any_scorer_and_limited_to_six_sources() -> None:
    rng = np.random.default_rng(7)
    table = {m: float(rng.normal()) for m in itertools.product([False, True], repeat=5)}
    shapley = exact_shapley(lambda masks: [table[tuple(m)] for m in masks], 5)
    assert sum(shapley.scores) == pytest.approx(table[(True,) * 5] - table[(False,) * 5])
    with pytest.raises(ConfigError, match="k <= 6 sources, got 7"):
        exact_shapley(additive([1.0] * 7), 7)


class Recording:
    """A scorer that records every mask it is asked for."""

    def __init__(self, score: MaskScorer) -> None:
        self.score = score
        self.masks: list[Mask] = []

    def __call__(self, masks: Sequence[Mask]) -> list[float]:
        self.masks.extend(tuple(m) for m in masks)
        return self.score(masks)


def test_hierarchical_credits_two_redundant_sentences_that_leave_one_out_scores_0() -> None:
    def either(masks: Sequence[Mask]) -> list[float]:  # the answer needs sentence 1 or 4
        return [-12.0 + (5.0 if m[1] or m[4] else 0.0) + 0.2 * m[6] for m in masks]

    groups = [[0, 1, 2], [3, 4, 5], [6, 7]]
    loo = leave_one_out(either, 8)
    assert loo.scores[1] == loo.scores[4] == 0.0
    for seed in range(8):
        ours = hierarchical(either, groups, max_passes=24, seed=seed)
        assert {1, 4} <= set(ours.ranking()[:3]), seed
        assert min(ours.scores[1], ours.scores[4]) > 0.25  # leave-one-out: 0
        assert top_k_drop(either, ours, 3) >= 5.0  # both removed
    assert top_k_drop(either, loo, 3) == pytest.approx(0.2)  # 6 and two sources worth 0


def test_hierarchical_settles_its_top_three_by_measured_removals() -> None:
    score = additive(WEIGHTS, base=-20.0)
    groups = [[0, 1], [2, 3, 4], [5]]
    ours = hierarchical(score, groups, max_passes=24, seed=3)
    assert ours.ranking()[:3] == [1, 5, 3]  # the 3.0, 2.0 and 1.25 sources, in that order
    assert ours.full == pytest.approx(-20.0 + sum(WEIGHTS)) and ours.seed == 3
    assert lds(score, ours, n_masks=32, seed=99) > 0.9
    with pytest.raises(ConfigError, match="partition"):
        hierarchical(score, [[0, 1], [1, 2]])
    with pytest.raises(ConfigError, match="max_passes"):
        hierarchical(score, groups, max_passes=0)


@pytest.mark.parametrize("budget", [1, 2, 3, 4, 6, 9, 12, 24, 40])
def test_hierarchical_never_exceeds_its_budget(budget: int) -> None:
    rng = np.random.default_rng(budget)
    for sizes in ([1], [3], [1, 1], [2, 5, 1], [4, 4, 4, 4, 4, 4], [9, 3, 8]):
        k = sum(sizes)
        bounds = np.cumsum([0, *sizes])
        groups = [list(range(int(a), int(b))) for a, b in itertools.pairwise(bounds)]
        recording = Recording(dominant(k, int(rng.integers(k)), budget))
        ours = hierarchical(recording, groups, max_passes=budget, seed=budget)
        asked = set(recording.masks)
        assert ours.passes == len(asked) <= budget, (sizes, budget)
        assert len(ours.scores) == k and all(math.isfinite(s) for s in ours.scores)
        assert (True,) * k in asked  # the full prompt first, whatever the budget
        if budget >= 1 + len(groups) + 2 and 2**k >= 4 * budget:  # room for random masks
            assert ours.passes >= budget - 3  # the rest of the budget is spent
            # the random rows are ContextCite's masks of the same seed: all but 2 checks
            drawn = asked & set(random_masks(k, budget, budget))
            assert len(drawn) >= budget - 1 - len(groups) - 2 - 2


def test_hierarchical_spends_its_budget_on_random_rows_and_two_top_three_checks() -> None:
    k, groups = 12, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    weights = [0.1, 4.0, 0.0, 0.2, 0.0, 3.0, 0.1, 0.0, 0.0, 0.3, 2.5, 0.0]
    recording = Recording(additive(weights))
    ours = hierarchical(recording, groups, max_passes=24, seed=5)
    asked = set(recording.masks)
    assert ours.passes == len(asked) == 24
    drawn = asked & set(random_masks(k, 20, 5))
    assert len(drawn) == 24 - 1 - 3 - 2  # the full prompt, 3 groups, 2 checked sets
    checked = [m for m in asked - drawn if m.count(False) == 3]
    assert len(checked) == 2  # two candidate top-3 sets, not a search over many
    assert ours.ranking()[:3] == [1, 5, 10]
    assert top_k_drop(additive(weights), ours, 3) == pytest.approx(9.5)


def test_hierarchical_with_one_group_or_one_sentence() -> None:
    score = dominant(5, 2, 0)
    one_group = hierarchical(score, [[0, 1, 2, 3, 4]], max_passes=24)
    assert one_group.ranking()[0] == 2
    one_sentence = hierarchical(additive([2.5], base=-9.0), [[0]], max_passes=24)
    assert one_sentence.scores[0] > 0.0 and one_sentence.passes == 2  # full and empty
    small = hierarchical(score, [[0], [1], [2], [3], [4]], max_passes=3)  # under the groups
    assert small.passes == 3 and len(small.scores) == 5


def test_random_masks_are_seeded_per_mask() -> None:
    assert random_masks(5, 3, seed=9) == random_masks(5, 10, seed=9)[:3]
    assert random_masks(5, 3, seed=9) != random_masks(5, 3, seed=10)
    kept = np.array(random_masks(8, 400, seed=1)).mean()
    assert 0.45 < kept < 0.55


def test_numpy_lasso_matches_scikit_learn() -> None:
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6))
    y = x @ np.array([1.0, 0.0, -2.0, 0.05, 0.0, 0.5]) + rng.normal(0, 0.1, 40) + 3.0
    ours, intercept = lasso(x, y, 0.1)
    reference = sklearn.Lasso(alpha=0.1, tol=1e-12, max_iter=100_000).fit(x, y)
    assert ours == pytest.approx(reference.coef_, abs=1e-6)
    assert intercept == pytest.approx(reference.intercept_, abs=1e-6)
    assert ours[1] == 0.0  # sparse


def test_compare_gives_a_paired_interval() -> None:
    summary = compare("top1", [2.0, 3.0, 2.5, 4.0], [1.0, 2.0, 2.5, 3.0], StatsSettings(seed=1))
    assert summary.mean == pytest.approx(0.75)
    assert summary.ci_low is not None and summary.ci_low >= 0.0
    assert summary.n == 4


@pytest.mark.parametrize("seed", range(4))
def test_hierarchical_top_three_is_the_measured_set_that_lost_most(seed: int) -> None:
    k, groups = 10, [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]
    recording = Recording(dominant(k, seed, seed))
    ours = hierarchical(recording, groups, max_passes=24, seed=seed)
    full = recording.score([(True,) * k])[0]
    others = set(random_masks(k, 24, seed)) | {
        tuple(i not in g for i in range(k)) for g in groups
    }  # the random and the group rows
    sets = {m for m in recording.masks if m.count(False) == 3 and m not in others}
    assert sets  # at least one candidate top-3 set was measured
    lost = {m: full - recording.score([m])[0] for m in sets}
    best = max(lost.values())
    top3 = set(ours.ranking()[:3])
    assert top_k_drop(recording.score, ours, 3) == pytest.approx(best)
    assert tuple(i not in top3 for i in range(k)) in sets
