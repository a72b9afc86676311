"""The resampling matrices at their edges: every item drawn (the last one too), the bounds of
n and B, chunked sums equal to the counts, the interval at its stated level."""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.analyzer.stats import _resample as rs
from groundtrace.analyzer.stats import (
    bootstrap_counts,
    bootstrap_indices,
    bootstrap_sums,
    percentile_interval,
)

exact_sign_matrix = rs.exact_sign_matrix  # the sign tests' matrices (module-level names)
sign_flip_matrix = rs.sign_flip_matrix


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_bootstrap_draws_every_item_the_first_and_the_last(n: int) -> None:
    idx = bootstrap_indices(n, 500, 11)
    assert idx.shape == (500, n)
    assert set(np.unique(idx).tolist()) == set(range(n))
    # the documented generator: numpy's PCG64 from the seed, integers in [0, n)
    expected = np.random.default_rng(11).integers(0, n, size=(500, n), dtype=np.intp)
    assert np.array_equal(idx, expected)


def test_the_matrices_are_read_only_and_cached() -> None:
    for matrix in (
        bootstrap_indices(4, 10, 1), bootstrap_counts(4, 10, 1), sign_flip_matrix(4, 10, 1),
        exact_sign_matrix(3),
    ):  # fmt: skip
        assert not matrix.flags.writeable
    assert bootstrap_indices(4, 10, 1) is bootstrap_indices(4, 10, 1)
    assert bootstrap_counts(4, 10, 1) is bootstrap_counts(4, 10, 1)
    assert sign_flip_matrix(4, 10, 1) is sign_flip_matrix(4, 10, 1)
    assert exact_sign_matrix(3) is exact_sign_matrix(3)
    assert not np.array_equal(bootstrap_indices(4, 10, 1), bootstrap_indices(4, 10, 2))


@pytest.mark.parametrize(("n", "b"), [(0, 5), (5, 0), (-1, 5), (0, 0)])
def test_n_and_b_below_one_are_refused(n: int, b: int) -> None:
    message = rf"^bootstrap needs n >= 1 and n_resamples >= 1, got {n}, {b}$"
    with pytest.raises(ValueError, match=message):
        bootstrap_indices(n, b, 0)
    with pytest.raises(ValueError, match=message):
        bootstrap_counts(n, b, 0)
    if n >= 0:
        with pytest.raises(ValueError, match=message):
            bootstrap_sums(np.ones(n), b, 0)
    with pytest.raises(
        ValueError, match=rf"^sign flips need n >= 1 and n_permutations >= 1, got {n}, {b}$"
    ):
        sign_flip_matrix(n, b, 0)


def test_one_item_and_one_resample_are_enough() -> None:
    assert bootstrap_indices(1, 1, 0).tolist() == [[0]]
    assert bootstrap_counts(1, 1, 0).tolist() == [[1.0]]
    assert bootstrap_sums(np.array([3.0]), 1, 0).tolist() == [3.0]
    assert sign_flip_matrix(1, 1, 0).shape == (1, 1)


@pytest.mark.parametrize("n", [1, 5, 9])
def test_counts_are_the_draws_of_the_index_matrix(n: int) -> None:
    idx = bootstrap_indices(n, 300, 5)
    counts = bootstrap_counts(n, 300, 5)
    expected = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
    assert np.array_equal(counts, expected)
    assert np.all(counts.sum(axis=1) == n)


@pytest.mark.parametrize("chunk", [1, 7, 25, 1 << 20])
def test_chunked_sums_equal_the_counts_product(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    values = np.arange(10, dtype=np.float64).reshape(5, 2)
    monkeypatch.setattr(rs, "SUM_CHUNK_CELLS", chunk)
    sums = bootstrap_sums(values, 23, 9)
    assert sums.shape == (23, 2)
    assert np.array_equal(sums, bootstrap_counts(5, 23, 9) @ values)
    flat = bootstrap_sums(values[:, 0], 23, 9)
    assert flat.shape == (23,) and np.array_equal(flat, sums[:, 0])


def test_sums_need_integer_values() -> None:
    with pytest.raises(
        ValueError, match=r"^bootstrap_sums needs integer values \(its sums must be exact\)$"
    ):
        bootstrap_sums(np.array([1.0, 0.5]), 10, 0)


@pytest.mark.parametrize("n", [13, 16, 17])
def test_sign_flips_are_plus_or_minus_one_from_their_own_stream(n: int) -> None:
    signs = sign_flip_matrix(n, 4000, 3)
    assert signs.shape == (4000, n)
    assert set(np.unique(signs).tolist()) == {-1.0, 1.0}
    assert np.all(np.abs(signs.mean(axis=0)) < 0.06)  # fair in every column, the last too
    # the documented stream: SeedSequence(seed, spawn_key=(1,)), one byte for eight signs
    rng = np.random.default_rng(np.random.SeedSequence(3, spawn_key=(1,)))
    packed = rng.integers(0, 256, size=(4000, (n + 7) // 8), dtype=np.uint8)
    expected = np.unpackbits(packed, axis=1, count=n).astype(np.float64) * 2 - 1
    assert np.array_equal(signs, expected)
    assert rs.SIGN_STREAM == (1,)


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_the_exact_enumeration_has_every_sign_vector_once(n: int) -> None:
    signs = exact_sign_matrix(n)
    assert signs.shape == (2**n, n)
    assert len({tuple(row) for row in signs.tolist()}) == 2**n
    assert set(np.unique(signs).tolist()) == {-1.0, 1.0}
    assert signs[0].tolist() == [-1.0] * n and signs[-1].tolist() == [1.0] * n


def test_exact_enumeration_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    for n in (0, 21):
        with pytest.raises(
            ValueError, match=rf"^exact sign enumeration needs 1 <= n <= 20, got {n}$"
        ):
            exact_sign_matrix(n)
    # 20 is allowed (checked without building its 2**20 rows)
    monkeypatch.setattr(rs, "_exact_signs", lambda n: np.full((1, n), float(n)))
    assert exact_sign_matrix(20).shape == (1, 20)


@pytest.mark.parametrize(
    ("confidence", "expected"), [(0.95, (25.0, 975.0)), (0.9, (50.0, 950.0)), (0.5, (250, 750))]
)
def test_the_interval_is_at_its_stated_level(
    confidence: float, expected: tuple[float, float]
) -> None:
    replicates = np.arange(1001, dtype=np.float64)
    assert percentile_interval(replicates, confidence) == pytest.approx(expected)


def test_the_default_interval_is_95_percent() -> None:
    assert percentile_interval(np.arange(1001, dtype=np.float64)) == pytest.approx((25.0, 975.0))


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_the_mean_interval_is_at_its_stated_level(confidence: float) -> None:
    from groundtrace.analyzer.stats._bootstrap import bootstrap_mean_ci, bootstrap_means

    deltas = np.arange(40, dtype=np.float64).reshape(20, 2) % 7
    _, lows, highs = bootstrap_mean_ci(deltas, 2000, 4, confidence)
    replicates = bootstrap_means(deltas, 2000, 4)
    alpha = (1 - confidence) / 2
    assert np.allclose(lows, np.quantile(replicates, alpha, axis=0))
    assert np.allclose(highs, np.quantile(replicates, 1 - alpha, axis=0))
