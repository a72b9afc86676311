"""Operating characteristics of the release gate (SPEC section 4.5, ``simulate``).

Synthetic baseline/candidate runs are drawn per stratum from binomials; each replication goes
through exactly the comparison of :mod:`._bayes` (vectorised over replications) and through the
naive gate (promote iff the candidate's observed pass rate >= the baseline's minus delta). The
table shows how often each gate promotes, reviews or blocks when the candidate regresses, does
not change or improves, plus heterogeneous scenarios where only the critical stratum regresses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgspec
import numpy as np
import numpy.typing as npt

from ._bayes import BayesSettings, StratumThresholds

__all__ = [
    "DEFAULT_BASELINE",
    "DEFAULT_SHARES",
    "SCENARIOS",
    "Scenario",
    "SimulationCell",
    "simulate",
]

#: Stratum shares of the synthetic case sets.
DEFAULT_SHARES: Mapping[str, float] = {"general": 0.50, "domain_specific": 0.30, "critical": 0.20}
#: Baseline pass rates per stratum.
DEFAULT_BASELINE: Mapping[str, float] = {"general": 0.90, "domain_specific": 0.85, "critical": 0.80}


@dataclass(frozen=True, slots=True)
class Scenario:
    """A candidate shift per stratum (added to the baseline pass rate)."""

    name: str
    shift: Mapping[str, float]


def _uniform(name: str, value: float) -> Scenario:
    return Scenario(name, dict.fromkeys(DEFAULT_SHARES, value))


#: The SPEC's three uniform scenarios plus heterogeneous ones (only the critical stratum moves).
SCENARIOS: tuple[Scenario, ...] = (
    _uniform("regression", -0.05),
    _uniform("no_change", 0.0),
    _uniform("improvement", +0.05),
    Scenario(
        "critical_only_regression_0.10", {"general": 0.0, "domain_specific": 0.0, "critical": -0.10}
    ),
    Scenario(
        "critical_only_regression_0.15", {"general": 0.0, "domain_specific": 0.0, "critical": -0.15}
    ),
)


class SimulationCell(msgspec.Struct, frozen=True):
    """Decision rates of one (scenario, N, profile) cell over all replications.

    ``promote_rate``/``review_rate``/``block_rate`` are those of the full gate (pooled and
    per-stratum, most severe wins); the ``pooled_*`` rates are those of the pooled comparison
    alone, so the table shows what the per-stratum check adds.
    """

    scenario: str
    n: int
    profile: str
    tau_review: float
    promote_rate: float
    review_rate: float
    block_rate: float
    mean_rho: float
    naive_promote_rate: float
    pooled_promote_rate: float
    pooled_review_rate: float
    pooled_block_rate: float
    reps: int
    samples: int
    seed: int


def _allocate(n: int, shares: Mapping[str, float]) -> dict[str, int]:
    """Largest-remainder allocation of ``n`` cases to strata."""
    names = list(shares)
    exact = np.array([shares[s] * n for s in names])
    counts = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - counts), kind="stable")[: n - int(counts.sum())]:
        counts[i] += 1
    return dict(zip(names, (int(c) for c in counts), strict=True))


def _decide_many(
    rho: npt.NDArray[np.float64], tau_block: float, tau_review: float
) -> npt.NDArray[np.int8]:
    """Vectorised :func:`._bayes.decide`: 0 promote, 1 review, 3 block (severity codes)."""
    return np.where(rho >= tau_block, 3, np.where(rho >= tau_review, 1, 0)).astype(np.int8)


def _risks(
    rng: np.random.Generator,
    n_c: npt.NDArray[np.int64],
    k_a: npt.NDArray[np.int64],
    k_b: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    settings: BayesSettings,
    deltas_c: npt.NDArray[np.float64],
    block: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Pooled rho (reps,) and per-stratum rho_c (reps, strata), in blocks of replications."""
    reps = k_a.shape[0]
    rho = np.empty(reps)
    rho_c = np.empty((reps, n_c.size))
    a0, b0 = settings.prior_alpha, settings.prior_beta
    for start in range(0, reps, block):
        sl = slice(start, min(start + block, reps))
        ka, kb = k_a[sl, None, :], k_b[sl, None, :]
        size = (ka.shape[0], settings.samples, n_c.size)
        draws_a = rng.beta(a0 + ka, b0 + n_c - ka, size=size)
        draws_b = rng.beta(a0 + kb, b0 + n_c - kb, size=size)
        diff_c = draws_b - draws_a
        rho[sl] = np.mean(diff_c @ weights < -settings.delta, axis=1)
        rho_c[sl] = np.mean(diff_c < -deltas_c, axis=1)
    return rho, rho_c


def simulate(
    *,
    sizes: Sequence[int] = (20, 50, 100, 200),
    profiles: Mapping[str, BayesSettings],
    scenarios: Sequence[Scenario] = SCENARIOS,
    reps: int = 1000,
    seed: int = 20260709,
    shares: Mapping[str, float] = DEFAULT_SHARES,
    baseline: Mapping[str, float] = DEFAULT_BASELINE,
    block: int = 50,
    progress: Callable[[], None] | None = None,
) -> list[SimulationCell]:
    """Run the operating-characteristics study.

    Every (scenario, N) pair gets its own generator spawned from ``seed`` (so a cell does not
    depend on which other cells ran); the posterior draws of a replication are shared by all
    profiles, which differ only in their thresholds, so profiles are compared on equal draws.
    Per-stratum thresholds and the Monte-Carlo sample count come from the first profile.

    Args:
        sizes: numbers of cases N per run.
        profiles: named gate settings (e.g. ``balanced_default`` and ``decision_grade``).
        scenarios: candidate shifts.
        reps: replications per cell.
        seed: root seed.
        shares: stratum shares of each synthetic case set.
        baseline: baseline pass rate per stratum.
        block: replications per vectorised block (memory: block x samples x strata doubles).
        progress: called once per finished (scenario, N) pair.
    """
    if not profiles:
        raise ValueError("simulate() needs at least one profile")
    names = list(shares)
    first = next(iter(profiles.values()))
    root = np.random.SeedSequence(seed)
    children = root.spawn(len(scenarios) * len(sizes))
    cells: list[SimulationCell] = []
    for i, scenario in enumerate(scenarios):
        p_a = np.array([baseline[s] for s in names])
        p_b = np.clip(p_a + np.array([scenario.shift.get(s, 0.0) for s in names]), 0.0, 1.0)
        for j, n in enumerate(sizes):
            rng = np.random.default_rng(children[i * len(sizes) + j])
            alloc = _allocate(n, shares)
            n_c = np.array([alloc[s] for s in names], dtype=np.int64)
            k_a = rng.binomial(n_c, p_a, size=(reps, len(names)))
            k_b = rng.binomial(n_c, p_b, size=(reps, len(names)))
            weights = (
                np.array([first.weights[s] for s in names]) if first.weights else n_c / n_c.sum()
            )
            weights = weights / weights.sum()
            thresholds = [first.strata.get(s) for s in names]
            deltas_c = np.array([t.delta if t else np.inf for t in thresholds])
            rho, rho_c = _risks(rng, n_c, k_a, k_b, weights, first, deltas_c, block)
            naive = (k_b.sum(1) / n) >= (k_a.sum(1) / n) - first.delta
            for profile_name, settings in profiles.items():
                pooled = _decide_many(rho, settings.tau_block, settings.tau_review)
                final = pooled.copy()
                for c, name in enumerate(names):
                    t: StratumThresholds | None = settings.strata.get(name)
                    if t is not None:
                        final = np.maximum(
                            final, _decide_many(rho_c[:, c], t.tau_block, t.tau_review)
                        )
                cells.append(
                    SimulationCell(
                        scenario=scenario.name,
                        n=n,
                        profile=profile_name,
                        tau_review=settings.tau_review,
                        promote_rate=float(np.mean(final == 0)),
                        review_rate=float(np.mean(final == 1)),
                        block_rate=float(np.mean(final == 3)),
                        mean_rho=float(rho.mean()),
                        naive_promote_rate=float(naive.mean()),
                        pooled_promote_rate=float(np.mean(pooled == 0)),
                        pooled_review_rate=float(np.mean(pooled == 1)),
                        pooled_block_rate=float(np.mean(pooled == 3)),
                        reps=reps,
                        samples=first.samples,
                        seed=seed,
                    )
                )
            if progress is not None:
                progress()
    return cells
