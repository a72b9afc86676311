"""The records an intervention run writes: ``summary.json`` and the rows of ``results.jsonl``.

:class:`InterventionSummary` is a versioned :class:`~groundtrace.analyzer._results.Result`;
the reports (``summary.md``, ``report.html``) render from it and from the :class:`ReplayRow`s.
"""

from __future__ import annotations

from typing import Self

import msgspec

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.llm import ClientCounts
from groundtrace.analyzer.metrics import DivergenceWeights
from groundtrace.analyzer.stats import DeltaSummary, StatsSettings

from ._axes import SensitivityRow

__all__ = [
    "AxisEffect",
    "CallCounts",
    "CounterfactualAnswer",
    "DivergenceParts",
    "Estimate",
    "InputCounts",
    "InterventionStatistics",
    "InterventionSummary",
    "JointResult",
    "OperatorResult",
    "OriginalAnswer",
    "ReplayFailure",
    "ReplayRow",
    "ReplaySettings",
    "RoleVerdict",
    "RolesResult",
    "RunSeeds",
    "ShapleyItem",
    "ShapleyResult",
    "Shift",
]


class Estimate(msgspec.Struct, frozen=True):
    """A mean with its CI and tests (the figures of a :class:`DeltaSummary` a report shows)."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    wilcoxon_p: float | None
    alternative: str
    n: int
    n_missing: int

    @classmethod
    def of(cls, d: DeltaSummary, *means: float | None) -> Self:
        """The figures of ``d`` (followed by a subclass's ``means``)."""
        return cls(d.mean, d.ci_low, d.ci_high, d.p_value, d.wilcoxon_p, d.alternative, d.n,
                   d.n_missing, *means)  # fmt: skip


class Shift(Estimate, frozen=True):
    """A paired change with the means of both conditions (e.g. of the confidence)."""

    original_mean: float | None
    intervened_mean: float | None


class AxisEffect(msgspec.Struct, frozen=True, omit_defaults=True):
    """Δ of one operator on one axis: both means, mean Δ, CI, p-values and n."""

    original_mean: float | None
    intervened_mean: float | None
    mean_delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    wilcoxon_p: float | None
    n: int
    #: the test, when not two-sided (D is tested one-sided)
    test: str | None = None


class OperatorResult(msgspec.Struct, frozen=True):
    """Statistics of one operator over the run's items."""

    n_items: int
    axes: dict[str, AxisEffect]
    answer_changed_rate: Estimate
    confidence_shift: Shift
    n_failed: int
    n_not_planned: int


class RoleVerdict(msgspec.Struct, frozen=True):
    """Aggregate verdict on one evidence role."""

    asserted: bool
    rate: Estimate
    rule: str


class RolesResult(msgspec.Struct, frozen=True):
    """Evidence roles: per-item counts and the aggregate verdicts (empty with no items)."""

    items: int
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    not_evaluable: dict[str, int] = msgspec.field(default_factory=dict)
    aggregate: dict[str, RoleVerdict] = msgspec.field(default_factory=dict)


class ShapleyItem(msgspec.Struct, frozen=True):
    """Shapley values of one item's gold supports (F1 as the value function)."""

    key: str
    players: tuple[str, ...]
    shapley: dict[str, float]
    v_all: float
    v_empty: float


class ShapleyResult(msgspec.Struct, frozen=True):
    """Mean Shapley values over items."""

    n: int
    mean_phi_best_ranked_support: Estimate
    mean_phi_second_support: Estimate
    mean_total_phi: Estimate
    items: tuple[ShapleyItem, ...]


class JointResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """Joint ablation of two gold supports (figures absent when no item was eligible)."""

    n: int
    mean_drop_first: Estimate | None = None
    mean_drop_second: Estimate | None = None
    mean_drop_joint: Estimate | None = None
    mean_synergy: Estimate | None = None
    positive_synergy_rate: Estimate | None = None
    strong_complementarity_rate: Estimate | None = None
    shapley: ShapleyResult | None = None


class InterventionStatistics(Result, frozen=True, kw_only=True):
    """What the statistics of a run found (the fields :class:`InterventionSummary` adds to)."""

    operators: dict[str, OperatorResult]
    skipped_axes: dict[str, str]
    divergence_weights: DivergenceWeights
    weight_sensitivity: tuple[SensitivityRow, ...]
    roles: RolesResult
    joint_ablation: JointResult
    failed_units: dict[str, int]
    failure_kinds: dict[str, int]
    not_planned: dict[str, int]
    stats_settings: StatsSettings
    #: operator -> why it was asked for but not run on any item, and the fix
    not_run: dict[str, str] = msgspec.field(default_factory=dict)
    #: what was found wrong with the data (a gold support matching no evidence item...)
    findings: tuple[str, ...] = ()
    #: why nothing was measured (no usable item, every replay unit failed), else ``None``
    nothing_measured: str | None = None


class InputCounts(msgspec.Struct, frozen=True):
    """What was read and what could not be used."""

    traces_read: int
    counterfactual_traces_ignored: int
    read_errors: tuple[str, ...]
    traces_not_usable: dict[str, str]
    traces_without_case: int
    not_replayable: dict[str, str] = msgspec.field(default_factory=dict)


class ReplaySettings(msgspec.Struct, frozen=True):
    """How the replay units were replayed."""

    mode: str
    entrypoint: str | None
    endpoint: str | None
    model: str | None
    temperature: float


class CallCounts(msgspec.Struct, frozen=True, omit_defaults=True):
    """Units run and model calls made (the endpoint figures only in endpoint replay)."""

    mode: str
    units_total: int
    from_journal: int
    run_now: int
    model_calls_made: int
    served_from_cache: int
    coalesced: int | None = None
    retries: int | None = None
    #: the model client's counters, endpoint replay only
    client: ClientCounts | None = None


class RunSeeds(msgspec.Struct, frozen=True):
    """Every seed and draw setting of the run."""

    operators: tuple[str, ...]
    model_seed: int
    random_target_seed: int
    replacement_seed: int
    replacement_similarity: str
    replacement_relevance: str
    recompute_original: bool
    bootstrap_seed: int
    permutation_seed: int
    n_resamples: int


class InterventionSummary(InterventionStatistics, frozen=True, kw_only=True):
    """``summary.json`` of an intervention run."""

    items: int
    input: InputCounts
    gold: str
    replay: ReplaySettings
    calls: CallCounts
    seeds: RunSeeds


class OriginalAnswer(msgspec.Struct, frozen=True):
    """τ of a replay unit: its answer and the ids it used."""

    trace_id: str
    answer: str
    confidence: float | None
    used_ids: tuple[str, ...]


class CounterfactualAnswer(msgspec.Struct, frozen=True):
    """τ̃ of a replay unit."""

    trace_id: str | None
    answer: str | None
    confidence: float | None
    cited_ids: tuple[str, ...]
    parse_error: str | None
    cached: bool | None


class ReplayFailure(msgspec.Struct, frozen=True):
    """Why a replay unit failed."""

    kind: str | None
    message: str | None


class DivergenceParts(msgspec.Struct, frozen=True):
    """The three terms of D."""

    used: float
    answer: float
    confidence: float | None


class ReplayRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One row of ``results.jsonl``: a replay unit, its replay and its comparison with τ."""

    key: str
    trace_id: str
    case_id: str | None
    operator: str
    target_id: str | None
    replacement_id: str | None
    seed: int
    evidence_ids: tuple[str, ...]
    status: str
    original: OriginalAnswer
    reference_answer: str | None = None
    counterfactual: CounterfactualAnswer | None = None
    error: ReplayFailure | None = None
    deltas: dict[str, float | None] | None = None
    divergence: float | None = None
    divergence_terms: DivergenceParts | None = None
