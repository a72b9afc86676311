"""Benchmark: paired bootstrap CIs + sign-flip p-values for 1000 items x 3 operators x 4 axes.

Prints one JSON object. The vectorised path (``summarise_deltas``: shared index/sign
matrices, one matrix product per statistic, plus the scipy Wilcoxon cross-check) is timed
cold (matrix caches cleared) and warm, as the median of several repeats, on one BLAS thread.
The naive path is a per-resample Python loop (one resample per iteration, fresh indices and
signs each time) run on a subset of resamples for one vector; its full cost is extrapolated
linearly and labelled as such.

Run: ``python benchmarks/analyzer_stats.py``
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from groundtrace.analyzer.stats import (  # noqa: E402
    StatsSettings,
    _resample,
    bootstrap_indices,
    summarise_deltas,
)
from groundtrace.analyzer.stats._bootstrap import bootstrap_mean_ci, bootstrap_means  # noqa: E402
from groundtrace.analyzer.stats._signflip import sign_flip_pvalues  # noqa: E402

N_ITEMS = 1000
OPERATORS = ("REMOVE", "REPLACE", "DUPLICATE")
AXES = ("correctness", "grounding", "calibration_error", "divergence")
B = 5000
SEED = 42
REPEATS = 5
NAIVE_SUBSET = 500
NAIVE_REPEATS = 3


def _data(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for op in OPERATORS:
        out[f"{op}/correctness"] = rng.choice([-1.0, 0.0, 1.0], N_ITEMS, p=[0.05, 0.8, 0.15])
        out[f"{op}/grounding"] = rng.choice(np.linspace(-1, 1, 11), N_ITEMS)
        out[f"{op}/calibration_error"] = rng.normal(-0.02, 0.2, N_ITEMS)
        out[f"{op}/divergence"] = np.clip(rng.normal(0.1, 0.15, N_ITEMS), 0.0, None)
    return out


def _clear_caches() -> None:
    for fn in (_resample._indices, _resample._counts, _resample._signs):
        fn.cache_clear()


def _median_time(fn: Any, repeats: int, cold: bool) -> float:
    times = []
    for _ in range(repeats):
        if cold:
            _clear_caches()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _naive(d: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    n = d.shape[0]
    means = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        means.append(float(np.mean(d[idx])))
    observed = abs(float(np.sum(d)))
    hits = 0
    for _ in range(n_resamples):
        signs = rng.choice((-1.0, 1.0), n)
        hits += abs(float(np.sum(signs * d))) >= observed
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high), (1 + hits) / (n_resamples + 1)


def main() -> None:
    data = _data(7)
    settings = StatsSettings(n_resamples=B, seed=SEED, n_permutations=B, permutation_seed=SEED)
    sides = {k: ("greater" if k.endswith("/divergence") else "two-sided") for k in data}
    matrix = np.column_stack(list(data.values()))

    def full() -> None:
        summarise_deltas(data, settings, sides)  # type: ignore[arg-type]

    def core() -> None:
        bootstrap_mean_ci(matrix, B, SEED, 0.95)
        sign_flip_pvalues(matrix, B, SEED, "two-sided")

    full_cold = _median_time(full, REPEATS, cold=True)
    full_warm = _median_time(full, REPEATS, cold=False)
    core_cold = _median_time(core, REPEATS, cold=True)
    core_warm = _median_time(core, REPEATS, cold=False)

    one = data["REMOVE/grounding"]
    naive_subset = _median_time(lambda: _naive(one, NAIVE_SUBSET, SEED), NAIVE_REPEATS, False)
    n_vectors = len(data)
    naive_extrapolated = naive_subset * (B / NAIVE_SUBSET) * n_vectors

    # Sanity: the vectorised resampled means equal explicit indexing of the same matrix.
    idx = bootstrap_indices(N_ITEMS, B, SEED)
    explicit = one[idx].mean(axis=1)
    vectorised = bootstrap_means(one[:, None], B, SEED)[:, 0]
    summary = summarise_deltas(data, settings, sides)  # type: ignore[arg-type]

    result = {
        "benchmark": "analyzer_stats",
        "shape": {"items": N_ITEMS, "operators": len(OPERATORS), "axes": len(AXES)},
        "vectors": n_vectors,
        "B_bootstrap": B,
        "B_permutation": B,
        "seed": SEED,
        "repeats": REPEATS,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "vectorised_seconds": {
            "summarise_deltas_cold_median": round(full_cold, 4),
            "summarise_deltas_warm_median": round(full_warm, 4),
            "core_bootstrap_plus_signflip_cold_median": round(core_cold, 4),
            "core_bootstrap_plus_signflip_warm_median": round(core_warm, 4),
            "note": "cold = index/count/sign matrix caches cleared before each repeat; "
            "summarise_deltas includes 12 scipy Wilcoxon calls",
        },
        "naive_loop": {
            "measured_vectors": 1,
            "measured_resamples_each_for_bootstrap_and_permutation": NAIVE_SUBSET,
            "measured_seconds_median": round(naive_subset, 4),
            "EXTRAPOLATED_seconds_full_workload": round(naive_extrapolated, 2),
            "extrapolation": f"x ({B}/{NAIVE_SUBSET}) resamples x {n_vectors} vectors, linear",
        },
        "speedup_naive_extrapolated_over_vectorised_cold": round(naive_extrapolated / full_cold, 1),
        "target_under_1s_one_core": full_cold < 1.0,
        "check_max_abs_diff_vectorised_vs_indexed_means": float(
            np.max(np.abs(vectorised - explicit))
        ),
        "example": {
            k: {
                "mean": v.mean,
                "ci": [v.ci_low, v.ci_high],
                "p": v.p_value,
                "wilcoxon_p": v.wilcoxon_p,
            }
            for k, v in summary.items()
            if k.startswith("REMOVE/")
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
