"""Evidence utility by intervention (SPEC 4.2): axes, statistics, roles, targets, pools.

Usage::

    from groundtrace.analyzer.interventions import (
        Gold, Outcome, compare, summarise_operators, select_target,
    )

    gold = Gold(reference="Paris", support_titles=frozenset({"France"}))
    orig = Outcome("Paris", 0.9, frozenset({"c1"}), {"c1": "France"})
    cf = Outcome("Lyon", 0.6, frozenset(), {})
    comparison = compare(orig, cf, gold)       # deltas per axis and D
    summary = summarise_operators({"REMOVE": [comparison] * 30})
"""

from __future__ import annotations

from ._axes import (
    DELTA_AXES,
    DIVERGENCE,
    REPORTED_AXES,
    AxisScores,
    AxisSettings,
    Comparison,
    Gold,
    OperatorSummary,
    Outcome,
    SensitivityRow,
    compare,
    divergence_sensitivity,
    score_outcome,
    summarise_operators,
)
from ._engine import ALL_OPERATORS, ItemPlan, PlanSettings, parse_operators
from ._joint import (
    MAX_SHAPLEY_PLAYERS,
    JointItem,
    JointSummary,
    joint_support_pair,
    shapley_values,
    summarise_joint,
)
from ._pool import (
    Hardness,
    PoolCandidate,
    ReplacementPool,
    build_replacement_pool,
    choose_replacement,
)
from ._records import (
    AxisEffect,
    CallCounts,
    CounterfactualAnswer,
    DivergenceParts,
    Estimate,
    InputCounts,
    InterventionStatistics,
    InterventionSummary,
    JointResult,
    OperatorResult,
    OriginalAnswer,
    ReplaySettings,
    RolesResult,
    RoleVerdict,
    RunSeeds,
    ShapleyItem,
    ShapleyResult,
    Shift,
    UnitError,
    UnitRow,
)
from ._report import operator_table_md, write_reports
from ._roles import (
    AggregateRole,
    ItemInterventions,
    ItemRoles,
    Role,
    RoleThresholds,
    aggregate_roles,
    assign_roles,
)
from ._run import RunConfig, RunResult, run_interventions, run_interventions_async
from ._run_demo import run_interventions_for_demo
from ._targets import EvidenceChunk, TargetChoice, TargetRule, random_target, select_target

__all__ = [
    "ALL_OPERATORS",
    "DELTA_AXES",
    "DIVERGENCE",
    "MAX_SHAPLEY_PLAYERS",
    "REPORTED_AXES",
    "AggregateRole",
    "AxisEffect",
    "AxisScores",
    "AxisSettings",
    "CallCounts",
    "Comparison",
    "CounterfactualAnswer",
    "DivergenceParts",
    "Estimate",
    "EvidenceChunk",
    "Gold",
    "Hardness",
    "InputCounts",
    "InterventionStatistics",
    "InterventionSummary",
    "ItemInterventions",
    "ItemPlan",
    "ItemRoles",
    "JointItem",
    "JointResult",
    "JointSummary",
    "OperatorResult",
    "OperatorSummary",
    "OriginalAnswer",
    "Outcome",
    "PlanSettings",
    "PoolCandidate",
    "ReplacementPool",
    "ReplaySettings",
    "Role",
    "RoleThresholds",
    "RoleVerdict",
    "RolesResult",
    "RunConfig",
    "RunResult",
    "RunSeeds",
    "SensitivityRow",
    "ShapleyItem",
    "ShapleyResult",
    "Shift",
    "TargetChoice",
    "TargetRule",
    "UnitError",
    "UnitRow",
    "aggregate_roles",
    "assign_roles",
    "build_replacement_pool",
    "choose_replacement",
    "compare",
    "divergence_sensitivity",
    "joint_support_pair",
    "operator_table_md",
    "parse_operators",
    "random_target",
    "run_interventions",
    "run_interventions_async",
    "run_interventions_for_demo",
    "score_outcome",
    "select_target",
    "shapley_values",
    "summarise_joint",
    "summarise_operators",
    "write_reports",
]
