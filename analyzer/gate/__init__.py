"""The release gate: promote / manual review / block / not evaluable (SPEC section 4.5).

A gate run compares a candidate run's traces with a baseline run's on a case file, under a
versioned profile, and decides whether the candidate may ship. It is an analysis like every
other: ``Config`` -> ``plan`` -> ``run`` -> ``write_report``, run end to end by the one driver,
``run_analysis(gate.ANALYSIS, gate.Config(baseline=..., candidate=..., cases=...), out=...)``
(``groundtrace gate run`` and ``groundtrace analyze gate --config FILE`` both do). Its result,
:class:`GateResult`, holds the :class:`GateReport` (``report.json``: the decision, each
:class:`CaseDecision`, the statistics) and the snapshots it was derived from, which
:func:`verify_report` re-derives it from. Its check layers are the deterministic checks, the
guardrails, the command paths of an agent (a declared path that fails is a failed check) and
the judge.

Usage::

    from groundtrace.analyzer.gate import load_profile, simulate

    profile = load_profile("balanced_default")  # every setting of the gate, typed
    print(profile.name, profile.sha256[:12], profile.settings.judge.modes)
    # the gate's operating characteristics: 20 replications per scenario at N = 50
    cells = simulate(profiles={profile.name: profile.bayes}, sizes=(50,), reps=20)
    print([(c.scenario, c.promote_rate, c.block_rate) for c in cells])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from groundtrace.analyzer._deprecation import renamed

from ._bayes import Decision
from ._cases import CheckStatus
from ._curate import CurationReport, curate
from ._decision import CaseDecision
from ._profile import BUILTIN_PROFILES, Profile, load_profile
from ._simulate import SCENARIOS, simulate

if TYPE_CHECKING:
    from ._reading import change_lines, reading
    from ._report import write_report
    from ._run import GateReport, GateResult, verify_report
    from ._shape import ANALYSIS, Config, nothing_measured, plan, run, verdicts

# The run of the gate is imported on first use (PEP 562): it loads the judges' and the
# executors' stacks, which the profiles, the Bayes rule and the simulation do not need.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("change_lines", "reading"), "._reading"),
    "write_report": "._report",
    **dict.fromkeys(("GateReport", "GateResult", "verify_report"), "._run"),
    **dict.fromkeys(("ANALYSIS", "Config", "nothing_measured", "plan", "run", "verdicts"),
                    "._shape"),
}  # fmt: skip

__all__ = [
    "ANALYSIS",
    "BUILTIN_PROFILES",
    "SCENARIOS",
    "CaseDecision",
    "CheckStatus",
    "Config",
    "CurationReport",
    "Decision",
    "GateReport",
    "GateResult",
    "Profile",
    "change_lines",
    "curate",
    "load_profile",
    "nothing_measured",
    "plan",
    "reading",
    "run",
    "simulate",
    "verdicts",
    "verify_report",
    "write_report",
]

#: Names public before 0.2.0, served one more release with a DeprecationWarning: the gate's
#: internals (its layers, the Bayes rule, the snapshots) are its private modules'.
_renamed = renamed(
    __name__,
    {
        "GateRun": "GateResult",
        "BUILTIN_RULES": "groundtrace.analyzer.gate._guardrails.BUILTIN_RULES",
        "BayesSettings": "groundtrace.analyzer.gate._bayes.BayesSettings",
        "CaseChange": "groundtrace.analyzer.gate._changes.CaseChange",
        "CaseOutcome": "groundtrace.analyzer.gate._cases.CaseOutcome",
        "ChangeKind": "groundtrace.analyzer.gate._changes.ChangeKind",
        "CheckResult": "groundtrace.analyzer.gate._cases.CheckResult",
        "CurationFinding": "groundtrace.analyzer.gate._curate.CurationFinding",
        "DatasetSnapshot": "groundtrace.analyzer.gate._run.DatasetSnapshot",
        "EXIT_CODES": "groundtrace.analyzer.gate._run.EXIT_CODES",
        "FailureChanges": "groundtrace.analyzer.gate._changes.FailureChanges",
        "GateCase": "groundtrace.analyzer.gate._shape.GateCase",
        "GatePlan": "groundtrace.analyzer.gate._shape.GatePlan",
        "Histogram": "groundtrace.analyzer.gate._bayes.Histogram",
        "JUDGE_MODES": "groundtrace.analyzer.gate._judge_layer.JUDGE_MODES",
        "JudgeLayer": "groundtrace.analyzer.gate._judge_layer.JudgeLayer",
        "JudgeSnapshot": "groundtrace.analyzer.gate._judge_layer.JudgeSnapshot",
        "JudgeVerdict": "groundtrace.analyzer.gate._judge_layer.JudgeVerdict",
        "PathSnapshot": "groundtrace.analyzer.gate._path_layer.PathSnapshot",
        "PathVerdict": "groundtrace.analyzer.gate._path_layer.PathVerdict",
        "RetrievedItem": "groundtrace.analyzer.gate._cases.RetrievedItem",
        "RiskResult": "groundtrace.analyzer.gate._bayes.RiskResult",
        "Rule": "groundtrace.analyzer.gate._guardrails.Rule",
        "RunDecision": "groundtrace.analyzer.gate._decision.RunDecision",
        "Scenario": "groundtrace.analyzer.gate._simulate.Scenario",
        "SimulationCell": "groundtrace.analyzer.gate._simulate.SimulationCell",
        "Snapshots": "groundtrace.analyzer.gate._run.Snapshots",
        "StratumCounts": "groundtrace.analyzer.gate._bayes.StratumCounts",
        "StratumRisk": "groundtrace.analyzer.gate._bayes.StratumRisk",
        "StratumThresholds": "groundtrace.analyzer.gate._bayes.StratumThresholds",
        "SynonymMatcher": "groundtrace.analyzer.gate._match.SynonymMatcher",
        "VerdictError": "groundtrace.analyzer.gate._judge_layer.VerdictError",
        "blocking_findings": "groundtrace.analyzer.gate._shape.blocking_findings",
        "code_version": "groundtrace.analyzer.gate._run.code_version",
        "compare": "groundtrace.analyzer.gate._bayes.compare",
        "compare_cases": "groundtrace.analyzer.gate._changes.compare_cases",
        "decide": "groundtrace.analyzer.gate._bayes.decide",
        "decide_case": "groundtrace.analyzer.gate._decision.decide_case",
        "decide_run": "groundtrace.analyzer.gate._decision.decide_run",
        "deterministic_checks": "groundtrace.analyzer.gate._checks.deterministic_checks",
        "eligibility": "groundtrace.analyzer.gate._judge_layer.eligibility",
        "evaluate": "groundtrace.analyzer.gate._run.evaluate",
        "fold": "groundtrace.analyzer.gate._match.fold",
        "gold_unmatched": "groundtrace.analyzer.gate._checks.gold_unmatched",
        "judge_checks": "groundtrace.analyzer.gate._judge_layer.judge_checks",
        "judge_snapshot": "groundtrace.analyzer.gate._judge_layer.judge_snapshot",
        "judge_verdicts": "groundtrace.analyzer.gate._judge_layer.judge_verdicts",
        "most_severe": "groundtrace.analyzer.gate._bayes.most_severe",
        "outcomes_from_traces": "groundtrace.analyzer.gate._run.outcomes_from_traces",
        "path_checks": "groundtrace.analyzer.gate._path_layer.path_checks",
        "path_snapshot": "groundtrace.analyzer.gate._path_layer.path_snapshot",
        "run_guardrails": "groundtrace.analyzer.gate._guardrails.run_guardrails",
        "scan_case_file": "groundtrace.analyzer.gate._curate.scan_case_file",
    },
    since="0.2.0",
    remove_in="0.3.0",
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        return _renamed(name)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
