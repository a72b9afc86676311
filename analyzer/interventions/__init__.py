"""Evidence utility by intervention (SPEC 4.2): axes, statistics, roles, targets, pools.

Usage::

    from pathlib import Path

    from groundtrace.analyzer.interventions import PlanSettings, RunConfig, run_interventions

    config = RunConfig(Path("runs/interventions"), plan=PlanSettings(operators=("REMOVE",)))
    result = run_interventions(["runs/demo/traces"], config, cases_path="runs/demo/cases.jsonl")
    print(result.summary.operators["REMOVE"].axes["correctness"].mean_delta)

The steps behind the run (axes and comparisons, targets, the replacement pool, roles,
joint ablation) live in the private modules of this package.
"""

from __future__ import annotations

from ._axes import DELTA_AXES, DIVERGENCE, REPORTED_AXES, AxisSettings, SensitivityRow
from ._engine import ALL_OPERATORS, ItemPlan, PlanSettings, parse_operators
from ._estimate import estimate_requests
from ._joint import MAX_SHAPLEY_PLAYERS
from ._pool import Hardness, PoolCandidate
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
from ._roles import Role, RoleThresholds
from ._run import RunConfig, RunResult, run_interventions, run_interventions_async
from ._targets import EvidenceChunk, TargetChoice, TargetRule

__all__ = [
    "ALL_OPERATORS",
    "DELTA_AXES",
    "DIVERGENCE",
    "MAX_SHAPLEY_PLAYERS",
    "REPORTED_AXES",
    "AxisEffect",
    "AxisSettings",
    "CallCounts",
    "CounterfactualAnswer",
    "DivergenceParts",
    "Estimate",
    "EvidenceChunk",
    "Hardness",
    "InputCounts",
    "InterventionStatistics",
    "InterventionSummary",
    "ItemPlan",
    "JointResult",
    "OperatorResult",
    "OriginalAnswer",
    "PlanSettings",
    "PoolCandidate",
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
    "estimate_requests",
    "operator_table_md",
    "parse_operators",
    "run_interventions",
    "run_interventions_async",
    "write_reports",
]
