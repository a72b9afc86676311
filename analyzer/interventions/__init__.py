"""Evidence utility by intervention (SPEC 4.2): axes, statistics, roles, targets, pools.

The analysis in its shape (``groundtrace interventions``, ``groundtrace analyze
interventions``): a :class:`Config` run by the one driver, which plans, locks the run folder,
opens its journal, runs (:func:`run`, async), writes the reports and decides the exit code.

Usage::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.interventions import ANALYSIS, Config

    config = Config(out="runs/interventions", traces=("runs/demo/traces",),
                    cases="runs/demo/cases.jsonl", operators=("REMOVE",))
    done = run_analysis(ANALYSIS, config, out=config.out, concurrency=config.in_flight())
    print(done.result.summary.operators["REMOVE"].axes["correctness"].mean_delta)
    print(done.reason or done.reading)

An *item* is one trace's plan (:class:`ItemPlan`: its target evidence and the perturbations
planned on it; :func:`plan` returns them as :class:`Items`, the driver's units); a *replay
unit* is one replay of one perturbation (an item has several; one :class:`ReplayRow` each in
``results.jsonl``). The steps behind the run (axes and comparisons, targets, the replacement
pool, roles, joint ablation) live in the private modules of this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use, renamed

from ._config import Config, HardnessLevel

if TYPE_CHECKING:
    from ._engine import ItemPlan
    from ._plan import Items
    from ._reading import reading
    from ._records import AxisEffect, Estimate, InterventionSummary, OperatorResult, ReplayRow
    from ._report import operator_table_md, write_report
    from ._roles import Role
    from ._run import InterventionsResult
    from ._shape import ANALYSIS, estimate_run, nothing_measured, plan, run, verdicts

__all__ = [
    "ANALYSIS",
    "AxisEffect",
    "Config",
    "Estimate",
    "HardnessLevel",
    "InterventionSummary",
    "InterventionsResult",
    "ItemPlan",
    "Items",
    "OperatorResult",
    "ReplayRow",
    "Role",
    "estimate_run",
    "nothing_measured",
    "operator_table_md",
    "plan",
    "reading",
    "run",
    "verdicts",
    "write_report",
]

#: Every name but the config record is imported on first use: ``groundtrace interventions
#: --help`` builds its options from :class:`Config` without numpy, the replay or the readers.
_SURFACE = {
    "._engine": ("ItemPlan",),
    "._plan": ("Items",),
    "._reading": ("reading",),
    "._records": ("AxisEffect", "Estimate", "InterventionSummary", "OperatorResult", "ReplayRow"),
    "._report": ("operator_table_md", "write_report"),
    "._roles": ("Role",),
    "._run": ("InterventionsResult",),
    "._shape": ("ANALYSIS", "estimate_run", "nothing_measured", "plan", "run", "verdicts"),
}
_HERE = __name__
#: Old and internal names, kept working for a release with a DeprecationWarning naming where
#: they are now (0.2.0; removed in 0.3.0). The older drivers (``run_interventions``...) warn
#: again when called, naming the driver that replaces them.
__getattr__ = renamed(
    __name__,
    {
        # renamed
        "write_reports": "write_report",
        "EvidenceChunk": "groundtrace.analyzer.replay.ReplayChunk",
        "RunResult": "InterventionsResult",
        "UnitRow": "ReplayRow",
        "UnitError": f"{_HERE}._records.ReplayFailure",
        # the older ways in
        "RunConfig": f"{_HERE}._deprecated.RunConfig",
        "run_interventions": f"{_HERE}._deprecated.run_interventions",
        "run_interventions_async": f"{_HERE}._deprecated.run_interventions_async",
        "estimate_requests": f"{_HERE}._deprecated.estimate_requests",
        "plan_run": f"{_HERE}._deprecated.plan_run",
        # building blocks, no longer public
        **{
            name: f"{_HERE}.{module}.{name}"
            for module, names in {
                "_axes": ("DELTA_AXES", "DIVERGENCE", "REPORTED_AXES", "AxisSettings",
                          "SensitivityRow"),
                "_engine": ("ALL_OPERATORS", "PlanSettings", "parse_operators"),
                "_joint": ("MAX_SHAPLEY_PLAYERS",),
                "_pool": ("Hardness", "PoolCandidate"),
                "_records": ("CallCounts", "CounterfactualAnswer", "DivergenceParts",
                             "InputCounts", "InterventionStatistics", "JointResult",
                             "OriginalAnswer", "ReplaySettings", "RoleVerdict", "RolesResult",
                             "RunSeeds", "ShapleyItem", "ShapleyResult", "Shift"),
                "_roles": ("RoleThresholds",),
                "_targets": ("TargetChoice", "TargetRule"),
            }.items()
            for name in names
        },
    },
    since="0.2.0",
    remove_in="0.3.0",
    fallback=imported_on_use(__name__, _SURFACE),
)  # fmt: skip
