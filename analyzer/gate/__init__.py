"""The release gate: promote / manual review / block / not evaluable (SPEC section 4.5).

Usage::

    from groundtrace.analyzer.gate import StratumCounts, compare, load_profile

    profile = load_profile("balanced_default")
    result = compare(
        {"general": StratumCounts(n=50, k=45)},
        {"general": StratumCounts(n=50, k=40)},
        profile.bayes,
    )
    print(result.decision, result.rho)

A whole gate run (``groundtrace gate run``) goes through the one analysis shape: ``Config``,
``plan``, ``run``, ``write_report``, ``reading`` and ``ANALYSIS``. Its check layers are the
deterministic checks, the guardrails, the command paths of an agent (``path_snapshot``,
``path_checks``: a declared path that fails is a failed check) and the judge.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._bayes import (
    BayesSettings,
    Decision,
    Histogram,
    RiskResult,
    StratumCounts,
    StratumRisk,
    StratumThresholds,
    compare,
    decide,
    most_severe,
)
from ._cases import CaseOutcome, CheckResult, CheckStatus, RetrievedItem
from ._changes import CaseChange, ChangeKind, FailureChanges, compare_cases
from ._checks import deterministic_checks, gold_unmatched
from ._curate import CurationFinding, CurationReport, curate, scan_case_file
from ._decision import CaseDecision, RunDecision, decide_case, decide_run
from ._guardrails import BUILTIN_RULES, Rule, run_guardrails
from ._match import SynonymMatcher, fold
from ._profile import BUILTIN_PROFILES, Profile, load_profile
from ._simulate import SCENARIOS, Scenario, SimulationCell, simulate

if TYPE_CHECKING:
    from ._judge_layer import (
        JUDGE_MODES,
        JudgeLayer,
        JudgeSnapshot,
        JudgeVerdict,
        VerdictError,
        eligibility,
        judge_checks,
        judge_snapshot,
        judge_verdicts,
    )
    from ._path_layer import PathSnapshot, PathVerdict, path_checks, path_snapshot
    from ._reading import change_lines, reading
    from ._report import write_report
    from ._run import (
        EXIT_CODES,
        DatasetSnapshot,
        GateReport,
        GateRun,
        Snapshots,
        code_version,
        evaluate,
        outcomes_from_traces,
        verify_report,
    )
    from ._shape import (
        ANALYSIS,
        Config,
        GateCase,
        GatePlan,
        blocking_findings,
        nothing_measured,
        plan,
        run,
        verdicts,
    )

# The run of the gate and its judge layer are imported on first use (PEP 562): they load the
# judges' and the executors' stacks, which the profiles, the Bayes rule and the simulation
# do not need.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        ("JUDGE_MODES", "JudgeLayer", "JudgeSnapshot", "JudgeVerdict", "VerdictError",
         "eligibility", "judge_checks", "judge_snapshot", "judge_verdicts"),
        "._judge_layer",
    ),
    **dict.fromkeys(("change_lines", "reading"), "._reading"),
    **dict.fromkeys(("PathSnapshot", "PathVerdict", "path_checks", "path_snapshot"),
                    "._path_layer"),
    "write_report": "._report",
    **dict.fromkeys(
        ("EXIT_CODES", "DatasetSnapshot", "GateReport", "GateRun", "Snapshots", "code_version",
         "evaluate", "outcomes_from_traces", "verify_report"),
        "._run",
    ),
    **dict.fromkeys(
        ("ANALYSIS", "Config", "GateCase", "GatePlan", "blocking_findings", "nothing_measured",
         "plan", "run", "verdicts"),
        "._shape",
    ),
}  # fmt: skip

__all__ = [
    "ANALYSIS",
    "BUILTIN_PROFILES",
    "BUILTIN_RULES",
    "EXIT_CODES",
    "JUDGE_MODES",
    "SCENARIOS",
    "BayesSettings",
    "CaseChange",
    "CaseDecision",
    "CaseOutcome",
    "ChangeKind",
    "CheckResult",
    "CheckStatus",
    "Config",
    "CurationFinding",
    "CurationReport",
    "DatasetSnapshot",
    "Decision",
    "FailureChanges",
    "GateCase",
    "GatePlan",
    "GateReport",
    "GateRun",
    "Histogram",
    "JudgeLayer",
    "JudgeSnapshot",
    "JudgeVerdict",
    "PathSnapshot",
    "PathVerdict",
    "Profile",
    "RetrievedItem",
    "RiskResult",
    "Rule",
    "RunDecision",
    "Scenario",
    "SimulationCell",
    "Snapshots",
    "StratumCounts",
    "StratumRisk",
    "StratumThresholds",
    "SynonymMatcher",
    "VerdictError",
    "blocking_findings",
    "change_lines",
    "code_version",
    "compare",
    "compare_cases",
    "curate",
    "decide",
    "decide_case",
    "decide_run",
    "deterministic_checks",
    "eligibility",
    "evaluate",
    "fold",
    "gold_unmatched",
    "judge_checks",
    "judge_snapshot",
    "judge_verdicts",
    "load_profile",
    "most_severe",
    "nothing_measured",
    "outcomes_from_traces",
    "path_checks",
    "path_snapshot",
    "plan",
    "reading",
    "run",
    "run_guardrails",
    "scan_case_file",
    "simulate",
    "verdicts",
    "verify_report",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
