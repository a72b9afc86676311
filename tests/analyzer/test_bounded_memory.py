"""What keeps ``paths`` flat in memory: chunked resample sums (the same numbers) and a bounded
list of unmatched traces (all counted)."""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.analyzer.paths import _metrics, _run
from groundtrace.analyzer.paths._tau import tau_bench_cases
from groundtrace.analyzer.stats import StatsSettings, _resample, bootstrap_counts, bootstrap_sums
from groundtrace.collectors.transcripts import read_transcripts
from tests.analyzer.paths.checking import validate
from tests.support.data import DATA

TAU = DATA / "agent_tools" / "tau_bench_traces" / "gpt-4o-airline_dev_40.jsonl"


@pytest.mark.parametrize("cells", [1, 7, 1000, _resample.SUM_CHUNK_CELLS])
@pytest.mark.parametrize(("n", "resamples"), [(1, 5), (13, 301), (997, 64)])
def test_chunked_sums_equal_the_full_counts_product_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, cells: int, n: int, resamples: int
) -> None:
    monkeypatch.setattr(_resample, "SUM_CHUNK_CELLS", cells)
    values = np.random.default_rng(n).integers(0, 40, size=n).astype(np.float64)
    expected = bootstrap_counts(n, resamples, 20260709) @ values
    assert np.array_equal(bootstrap_sums(values, resamples, 20260709), expected)


@pytest.mark.parametrize("cells", [1, 7, _resample.SUM_CHUNK_CELLS])
def test_columns_are_summed_over_the_same_resamples(
    monkeypatch: pytest.MonkeyPatch, cells: int
) -> None:
    """A ratio's numerator and denominator, one draw: each column as if summed alone."""
    monkeypatch.setattr(_resample, "SUM_CHUNK_CELLS", cells)
    values = np.random.default_rng(5).integers(0, 9, size=(41, 2)).astype(np.float64)
    both = bootstrap_sums(values, 257, 20260709)
    assert both.shape == (257, 2)
    for column in range(2):
        alone = bootstrap_sums(values[:, column].copy(), 257, 20260709)
        assert np.array_equal(both[:, column], alone)


def test_sums_of_non_integers_are_refused() -> None:
    with pytest.raises(ValueError, match="integer values"):
        bootstrap_sums(np.array([0.5, 1.0]), 10, 1)


def _ratio_as_before(num: list[float], den: list[float], settings: StatsSettings) -> tuple:
    """The metric as computed before the sums were chunked: the full counts matrix."""
    counts = bootstrap_counts(len(num), settings.n_resamples, settings.seed)
    num_b, den_b = counts @ np.asarray(num), counts @ np.asarray(den)
    keep = den_b > 0
    alpha = (1.0 - settings.confidence) / 2.0
    low, high = np.quantile(num_b[keep] / den_b[keep], [alpha, 1.0 - alpha])
    return float(low), float(high), int((~keep).sum())


def test_path_metrics_keep_their_numbers_for_the_same_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_resample, "SUM_CHUNK_CELLS", 50)  # many chunks of a few rows
    rng = np.random.default_rng(3)
    den = [float(x) for x in rng.integers(0, 4, size=211)]
    num = [float(rng.integers(0, d + 1)) for d in den]
    settings = StatsSettings(n_resamples=2000, seed=11)
    got = _metrics._ratio(num, den, settings, "empty")
    low, high, dropped = _ratio_as_before(num, den, settings)
    assert got.ci == (low, high) and got.dropped_resamples == dropped
    assert got.value == sum(num) / sum(den)


def test_unmatched_traces_are_all_counted_and_a_bounded_sample_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_run, "UNMATCHED_SAMPLE", 10)
    cases = list(tau_bench_cases(TAU))[:5]
    settings = StatsSettings(n_resamples=500)
    report = validate(read_transcripts([TAU]), cases, settings=settings)
    assert len(report.verdicts) == 5
    assert report.unmatched_count == 35 and len(report.unmatched_traces) == 10
