"""Paired bootstrap CIs, sign-flip p-values and the Wilcoxon cross-check (SPEC 4.2.2)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.stats import (
    StatsSettings,
    bootstrap_counts,
    bootstrap_indices,
    summarise_deltas,
    summarise_paired,
)
from groundtrace.analyzer.stats._bootstrap import bootstrap_means
from groundtrace.analyzer.stats._signflip import sign_flip_pvalues


def _exact_p(d: np.ndarray, alternative: str) -> float:
    """Independent reference: enumerate all 2**n sign vectors with itertools."""
    observed = d.sum()
    hits = 0
    total = 0
    for signs in itertools.product((-1.0, 1.0), repeat=d.shape[0]):
        t = float(np.dot(signs, d))
        total += 1
        if alternative == "two-sided":
            hits += abs(t) >= abs(observed) - 1e-9
        elif alternative == "greater":
            hits += t >= observed - 1e-9
        else:
            hits += t <= observed + 1e-9
    return hits / total


def test_counts_matrix_reproduces_indexed_resample_means() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(57, 4))
    idx = bootstrap_indices(57, 300, 11)
    expected = x[idx].mean(axis=1)
    np.testing.assert_allclose(bootstrap_means(x, 300, 11), expected, rtol=1e-12, atol=1e-12)
    assert bootstrap_counts(57, 300, 11).sum(axis=1).tolist() == [57.0] * 300


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("kind", ["normal", "skewed", "ternary"])
def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap(seed: int, kind: str) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 150
    if kind == "normal":
        d = rng.normal(0.1, 1.0, n)
    elif kind == "skewed":
        d = rng.exponential(1.0, n) - 0.8
    else:
        d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.2, 0.5, 0.3])
    ours = summarise_deltas({"d": d}, StatsSettings(n_resamples=5000, seed=seed))["d"]
    ref = sps.bootstrap(
        (d,), np.mean, n_resamples=5000, method="percentile", confidence_level=0.95, rng=seed + 999
    )
    se = d.std() / np.sqrt(n)
    # Two independent Monte Carlo percentile estimates differ by ~0.05 SE; allow 0.3 SE.
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.3 * se)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.3 * se)
    assert ours.mean == pytest.approx(d.mean())
    assert ours.ci_low is not None and ours.ci_high is not None
    assert ours.ci_low < d.mean() < ours.ci_high


def test_bootstrap_ci_is_seeded_and_recorded() -> None:
    d = np.random.default_rng(5).normal(size=80)
    a = summarise_deltas({"d": d}, StatsSettings(seed=42))["d"]
    b = summarise_deltas({"d": d}, StatsSettings(seed=42))["d"]
    c = summarise_deltas({"d": d}, StatsSettings(seed=43))["d"]
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert (a.seed, a.n_resamples, a.n, a.permutation_seed) == (42, 5000, 80, 42)
    assert "bootstrap" in a.method and "Monte Carlo" in a.p_method


@pytest.mark.parametrize("n", [3, 6, 9, 12])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_monte_carlo_sign_flip_p_matches_exact_enumeration(n: int, alternative: str) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 1.0, n).round(3)
    exact = _exact_p(d, alternative)
    p, used, enumerated, _ = sign_flip_pvalues(
        d[:, None],
        5000,
        42,
        alternative,
        exact=False,  # type: ignore[arg-type]
    )
    assert used == 5000 and not enumerated
    tolerance = 4.0 * np.sqrt(max(exact * (1 - exact), 1e-4) / 5000) + 2.0 / 5001
    assert p[0] == pytest.approx(exact, abs=tolerance)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 12])
def test_small_n_p_value_is_the_exact_enumeration(n: int) -> None:
    d = np.random.default_rng(20 + n).choice([-1.0, 0.0, 1.0, 0.5], size=n)
    s = summarise_deltas({"d": d})["d"]
    assert s.p_value == pytest.approx(_exact_p(d, "two-sided"), abs=1e-12)
    assert s.n_permutations == 2**n and s.permutation_seed is None
    assert "exact" in s.p_method


def test_sign_flip_counts_observed_statistic_plus_one() -> None:
    # Every item strongly positive: no random flip reaches the observed sum except the
    # all-plus vector, so p is (1 + ~0) / (B + 1), never 0.
    d = np.full(60, 1.0)
    s = summarise_deltas({"d": d})["d"]
    assert s.p_value == pytest.approx(1 / 5001)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_cross_check_agrees_with_scipy(alternative: str) -> None:
    d = np.array([0.5, -0.2, 0.0, 1.0, 1.0, 0.3, -1.0, 0.7, 0.0, 0.9, 0.4, 0.2])
    s = summarise_deltas({"d": d}, alternative=alternative)["d"]  # type: ignore[arg-type]
    # ties and zeros: the normal approximation (scipy's "auto" would run a slow permutation)
    ref = sps.wilcoxon(d, zero_method="wilcox", alternative=alternative, method="approx")
    assert s.wilcoxon_p == pytest.approx(ref.pvalue)
    assert s.wilcoxon_statistic == pytest.approx(ref.statistic)
    clean = np.array([0.5, -0.2, 1.1, 1.0, 0.3, -0.9, 0.7, 0.8, 0.4, 0.15])
    s = summarise_deltas({"d": clean}, alternative=alternative)["d"]  # type: ignore[arg-type]
    exact = sps.wilcoxon(clean, zero_method="wilcox", alternative=alternative, method="exact")
    assert s.wilcoxon_p == pytest.approx(exact.pvalue)


def test_n_zero_reports_nothing_measured_not_nan() -> None:
    s = summarise_deltas({"d": [np.nan, np.nan]})["d"]
    assert s.n == 0 and s.n_missing == 2
    assert s.mean is None and s.ci_low is None and s.p_value is None and s.wilcoxon_p is None
    assert s.note is not None and "nothing measured" in s.note
    assert not s.ci_excludes_zero
    empty = summarise_deltas({"d": []})["d"]
    assert empty.n == 0 and empty.mean is None


def test_n_one_is_degenerate_and_explicit() -> None:
    s = summarise_deltas({"d": [0.7]})["d"]
    assert (s.mean, s.ci_low, s.ci_high, s.p_value) == (0.7, 0.7, 0.7, 1.0)
    assert s.note is not None and "n = 1" in s.note


def test_all_zero_deltas_give_p_one_and_zero_interval() -> None:
    s = summarise_deltas({"d": np.zeros(40)})["d"]
    assert (s.mean, s.ci_low, s.ci_high, s.p_value, s.wilcoxon_p) == (0.0, 0.0, 0.0, 1.0, 1.0)
    assert s.note is not None and "all deltas zero" in s.note
    assert not s.ci_excludes_zero


def test_equal_scores_computed_two_ways_are_no_effect() -> None:
    # 1 - 0.9 and 0.1 differ in their last bit: a reading once printed "Δ -2.8e-17, CI -2.8e-17
    # to -2.8e-17" as an effect whose interval excludes 0
    before, after = [1 - 0.9] * 6, [0.1] * 6
    assert before[0] != after[0]
    cal = summarise_paired({"cal": before}, {"cal": after})["cal"]
    assert (cal.delta.mean, cal.delta.ci_low, cal.delta.ci_high) == (0.0, 0.0, 0.0)
    assert not cal.delta.ci_excludes_zero
    real = summarise_paired({"cal": [0.1 + 1e-9] * 6}, {"cal": after})["cal"]
    assert real.delta.ci_excludes_zero  # a small real difference stays


def test_missing_items_are_dropped_pairwise_and_counted() -> None:
    out = summarise_paired(
        {"cal": [0.1, np.nan, 0.4, 0.2], "corr": [1, 1, 0, 1]},
        {"cal": [0.3, 0.5, np.nan, 0.2], "corr": [0, 1, 0, 1]},
    )
    cal = out["cal"]
    assert cal.delta.n == 2 and cal.delta.n_missing == 2
    assert cal.mean_original == pytest.approx(0.15)
    assert cal.mean_counterfactual == pytest.approx(0.25)
    assert cal.delta.mean == pytest.approx(-0.1)
    corr = out["corr"]
    assert (corr.mean_original, corr.mean_counterfactual, corr.delta.mean) == (0.75, 0.5, 0.25)


def test_non_negative_divergence_one_sided_test() -> None:
    d = np.array([0.0, 0.5, 0.0, 0.2, 0.3, 0.0])  # 3 non-zero: exact one-sided p = 2**-3
    s = summarise_deltas({"D": d}, alternative={"D": "greater"})["D"]
    assert s.alternative == "greater"
    assert s.p_value == pytest.approx(1 / 8)
    assert s.ci_low is not None and s.ci_low >= 0.0


def test_many_vectors_at_once_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(9)
    vectors = {f"op{i}/axis{j}": rng.normal(size=200) for i in range(3) for j in range(4)}
    batch = summarise_deltas(vectors)
    for label, vector in vectors.items():
        single = summarise_deltas({label: vector})[label]
        assert batch[label].ci_low == pytest.approx(single.ci_low, abs=1e-12)
        assert batch[label].p_value == single.p_value


def test_invalid_inputs_fail_closed() -> None:
    with pytest.raises(InputError, match="infinite"):
        summarise_deltas({"d": [1.0, np.inf]})
    with pytest.raises(InputError):
        summarise_paired({"a": [1, 2]}, {"a": [1]})
    with pytest.raises(InputError):
        summarise_paired({"a": [1]}, {"b": [1]})
    with pytest.raises(ConfigError):
        StatsSettings(n_resamples=0)
