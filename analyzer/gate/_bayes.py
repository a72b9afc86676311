"""Bayesian baseline-vs-candidate comparison of pass rates (SPEC section 4.5).

Per stratum c the pass rate has the posterior ``Beta(alpha0 + k_c, beta0 + n_c - k_c)``; the run
quality is the weighted mean ``p_bar = sum_c w_c * p_c``; the regression risk is
``rho = P(p_bar_B < p_bar_A - delta | data)``, estimated by Monte-Carlo from a fixed seed. A and B
are modelled as independent, which is deliberately conservative (it widens the difference).

Per stratum the same comparison with a stratum-specific ``delta_c`` gives ``rho_c``, so a
regression in the critical stratum cannot hide behind the weighted mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

import msgspec
import numpy as np
import numpy.typing as npt

__all__ = [
    "HISTOGRAM_BINS",
    "BayesSettings",
    "Decision",
    "Histogram",
    "RiskResult",
    "StratumCounts",
    "StratumRisk",
    "StratumThresholds",
    "compare",
    "decide",
    "most_severe",
]


class Decision(StrEnum):
    """The four gate states, ordered by severity in :data:`_SEVERITY`."""

    PROMOTE = "promote"
    MANUAL_REVIEW = "manual_review"
    NOT_EVALUABLE = "not_evaluable"
    BLOCK = "block"


_SEVERITY: dict[Decision, int] = {
    Decision.PROMOTE: 0,
    Decision.MANUAL_REVIEW: 1,
    Decision.NOT_EVALUABLE: 2,
    Decision.BLOCK: 3,
}


def most_severe(decisions: Sequence[Decision]) -> Decision:
    """The most severe of ``decisions`` (promote < manual_review < not_evaluable < block)."""
    if not decisions:
        raise ValueError("most_severe() of no decisions")
    return max(decisions, key=_SEVERITY.__getitem__)


class StratumCounts(msgspec.Struct, frozen=True):
    """Passing cases ``k`` out of ``n`` in one stratum."""

    n: int
    k: int

    def __post_init__(self) -> None:
        if self.n < 0 or not 0 <= self.k <= self.n:
            raise ValueError(f"invalid stratum counts k={self.k}, n={self.n}")


class StratumThresholds(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Per-stratum tolerance and thresholds: a profile's ``[bayes.strata.<stratum>]`` (an
    absent key is its default)."""

    delta: float = 0.03
    tau_block: float = 0.8
    tau_review: float = 0.5


class BayesSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Settings of the comparison: a profile's ``[bayes]`` table, decoded as it is (an absent
    key is its default; a misspelt one is refused).

    Attributes:
        prior_alpha: alpha0 of the Beta prior.
        prior_beta: beta0 of the Beta prior.
        delta: tolerated drop of the weighted pass rate.
        tau_block: rho at or above which the run blocks.
        tau_review: rho at or above which the run goes to manual review.
        samples: Monte-Carlo draws S.
        seed: seed of the Monte-Carlo generator.
        weights: stratum weights; empty means the stratum shares of the candidate's cases.
        strata: per-stratum thresholds; strata without an entry get no per-stratum check.
    """

    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    delta: float = 0.03
    tau_block: float = 0.8
    tau_review: float = 0.5
    samples: int = 20_000
    seed: int = 20260709
    weights: dict[str, float] = msgspec.field(default_factory=dict)
    strata: dict[str, StratumThresholds] = msgspec.field(default_factory=dict)


class StratumRisk(msgspec.Struct, frozen=True):
    """Per-stratum posterior summary and risk.

    ``delta``, ``tau_block`` and ``tau_review`` are the thresholds ``rho`` is judged by (the
    profile's ``bayes.strata.<stratum>``); None when the stratum has none (no ``rho``).
    """

    stratum: str
    baseline: StratumCounts
    candidate: StratumCounts
    weight: float
    rho: float | None
    decision: Decision | None
    posterior_mean_baseline: float
    posterior_mean_candidate: float
    delta: float | None = None
    tau_block: float | None = None
    tau_review: float | None = None


class Histogram(msgspec.Struct, frozen=True):
    """Counts of draws per bin; ``edges`` has one more entry than ``counts``."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]


#: Bins of the posterior histogram kept in a :class:`RiskResult`.
HISTOGRAM_BINS = 80


class RiskResult(msgspec.Struct, frozen=True):
    """Outcome of :func:`compare`.

    The Monte-Carlo draws of ``p_bar_B - p_bar_A`` are kept as their mean, 95% interval and
    a histogram (``difference_histogram``, for plots).
    """

    rho: float
    decision: Decision
    pooled_decision: Decision
    delta: float
    tau_block: float
    tau_review: float
    samples: int
    seed: int
    difference_mean: float
    difference_ci95: tuple[float, float]
    strata: tuple[StratumRisk, ...]
    difference_histogram: Histogram


def decide(rho: float, tau_block: float, tau_review: float) -> Decision:
    """Map a regression risk to a decision: block, manual review or promote."""
    if rho >= tau_block:
        return Decision.BLOCK
    if rho >= tau_review:
        return Decision.MANUAL_REVIEW
    return Decision.PROMOTE


def _weights(
    names: Sequence[str], candidate: Mapping[str, StratumCounts], settings: BayesSettings
) -> npt.NDArray[np.float64]:
    if settings.weights:
        missing = [s for s in names if s not in settings.weights]
        if missing:
            raise ValueError(f"profile weights miss strata {missing}")
        raw = np.array([settings.weights[s] for s in names], dtype=np.float64)
    else:
        raw = np.array([candidate[s].n for s in names], dtype=np.float64)
    total = raw.sum()
    if total <= 0:
        raise ValueError("stratum weights sum to zero: no cases to compare")
    weights: npt.NDArray[np.float64] = raw / total
    return weights


def _posterior_draws(
    rng: np.random.Generator,
    counts: Sequence[StratumCounts],
    settings: BayesSettings,
    size: tuple[int, ...],
) -> npt.NDArray[np.float64]:
    """Draws of shape ``size + (len(counts),)`` from each stratum's Beta posterior."""
    a = np.array([settings.prior_alpha + c.k for c in counts], dtype=np.float64)
    b = np.array([settings.prior_beta + c.n - c.k for c in counts], dtype=np.float64)
    draws: npt.NDArray[np.float64] = rng.beta(a, b, size=(*size, len(counts)))
    return draws


def compare(
    baseline: Mapping[str, StratumCounts],
    candidate: Mapping[str, StratumCounts],
    settings: BayesSettings | None = None,
) -> RiskResult:
    """Regression risk of ``candidate`` against ``baseline``, pooled and per stratum.

    Args:
        baseline: passing/total counts per stratum of run A.
        candidate: passing/total counts per stratum of run B (same strata).
        settings: profile settings; defaults are the SPEC's ``balanced_default``.

    Returns:
        The pooled risk and decision, per-stratum risks and the final (most severe) decision.
    """
    settings = settings or BayesSettings()
    if set(baseline) != set(candidate):
        raise ValueError(
            f"strata differ: baseline {sorted(baseline)} vs candidate {sorted(candidate)}"
        )
    names = sorted(s for s in candidate if candidate[s].n > 0 or baseline[s].n > 0)
    if not names:
        raise ValueError("no cases in any stratum")
    weights = _weights(names, candidate, settings)
    rng = np.random.default_rng(settings.seed)
    draws_a = _posterior_draws(rng, [baseline[s] for s in names], settings, (settings.samples,))
    draws_b = _posterior_draws(rng, [candidate[s] for s in names], settings, (settings.samples,))
    diff = draws_b @ weights - draws_a @ weights
    rho = float(np.mean(diff < -settings.delta))
    pooled = decide(rho, settings.tau_block, settings.tau_review)

    strata: list[StratumRisk] = []
    decisions = [pooled]
    for j, name in enumerate(names):
        thresholds = settings.strata.get(name)
        rho_c: float | None = None
        decision_c: Decision | None = None
        if thresholds is not None and candidate[name].n > 0 and baseline[name].n > 0:
            rho_c = float(np.mean(draws_b[:, j] - draws_a[:, j] < -thresholds.delta))
            decision_c = decide(rho_c, thresholds.tau_block, thresholds.tau_review)
            decisions.append(decision_c)
        strata.append(
            StratumRisk(
                stratum=name,
                baseline=baseline[name],
                candidate=candidate[name],
                weight=float(weights[j]),
                rho=rho_c,
                decision=decision_c,
                posterior_mean_baseline=float(draws_a[:, j].mean()),
                posterior_mean_candidate=float(draws_b[:, j].mean()),
                delta=None if thresholds is None else thresholds.delta,
                tau_block=None if thresholds is None else thresholds.tau_block,
                tau_review=None if thresholds is None else thresholds.tau_review,
            )
        )
    counts, edges = np.histogram(diff, bins=HISTOGRAM_BINS)
    return RiskResult(
        rho=rho,
        decision=most_severe(decisions),
        pooled_decision=pooled,
        delta=settings.delta,
        tau_block=settings.tau_block,
        tau_review=settings.tau_review,
        samples=settings.samples,
        seed=settings.seed,
        difference_mean=float(diff.mean()),
        difference_ci95=(float(np.quantile(diff, 0.025)), float(np.quantile(diff, 0.975))),
        strata=tuple(strata),
        difference_histogram=Histogram(tuple(edges.tolist()), tuple(counts.tolist())),
    )
