"""Evidence utility by intervention (SPEC 4.2): axes, statistics, roles, targets, pools.

The analysis in its shape (``groundtrace interventions``, ``groundtrace analyze
interventions``): a :class:`Config` run by the one driver, which plans, locks the run folder,
opens its journal, runs (:func:`run`, async), writes the reports and decides the exit code.

Usage::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.interventions import ANALYSIS, Config

    config = Config(out="runs/interventions", traces=("runs/demo/traces",),
                    cases="runs/demo/cases.jsonl", operators=("REMOVE",))
    done = run_analysis(ANALYSIS, config, out=config.out, concurrency=config.concurrency)
    print(done.result.summary.operators["REMOVE"].axes["correctness"].mean_delta)
    print(done.reason or done.reading)

:func:`run_interventions` (deprecated) does the same from a :class:`RunConfig` (the run
folder plus the plan, replay, axis and statistics settings).
The steps behind the run (axes and comparisons, targets, the replacement pool, roles,
joint ablation) live in the private modules of this package; they all take the evidence
items as :class:`groundtrace.analyzer.replay.ReplayChunk`.
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._axes import DELTA_AXES, DIVERGENCE, REPORTED_AXES, AxisSettings, SensitivityRow
from ._config import Config, HardnessLevel
from ._deprecated import estimate_requests, run_interventions, run_interventions_async
from ._engine import ALL_OPERATORS, ItemPlan, PlanSettings, parse_operators
from ._joint import MAX_SHAPLEY_PLAYERS
from ._plan import Items
from ._pool import Hardness, PoolCandidate
from ._reading import reading
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
from ._report import operator_table_md, write_report
from ._roles import Role, RoleThresholds
from ._run import RunConfig, RunResult
from ._shape import ANALYSIS, estimate_run, nothing_measured, plan, run, verdicts
from ._targets import TargetChoice, TargetRule

__all__ = [
    "ALL_OPERATORS",
    "ANALYSIS",
    "DELTA_AXES",
    "DIVERGENCE",
    "MAX_SHAPLEY_PLAYERS",
    "REPORTED_AXES",
    "AxisEffect",
    "AxisSettings",
    "CallCounts",
    "Config",
    "CounterfactualAnswer",
    "DivergenceParts",
    "Estimate",
    "Hardness",
    "HardnessLevel",
    "InputCounts",
    "InterventionStatistics",
    "InterventionSummary",
    "ItemPlan",
    "Items",
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
    "estimate_run",
    "nothing_measured",
    "operator_table_md",
    "parse_operators",
    "plan",
    "reading",
    "run",
    "run_interventions",
    "run_interventions_async",
    "verdicts",
    "write_report",
]

#: Old names, kept working for a release with a DeprecationWarning naming the new one
#: (``EvidenceChunk``: the analyzer's one evidence record is the replay's ``ReplayChunk``).
__getattr__ = renamed(
    __name__,
    {
        "write_reports": "write_report",
        "EvidenceChunk": "groundtrace.analyzer.replay.ReplayChunk",
    },
    since="0.2.0",
)
