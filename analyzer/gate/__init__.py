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

from ._config import Config

if TYPE_CHECKING:
    from ._bayes import Decision
    from ._cases import CheckStatus
    from ._curate import CurationReport, curate
    from ._decision import CaseDecision
    from ._profile import BUILTIN_PROFILES, Profile, load_profile
    from ._reading import change_lines, reading
    from ._report import write_report
    from ._run import GateReport, GateResult, verify_report
    from ._shape import ANALYSIS, nothing_measured, plan, run, verdicts
    from ._simulate import SCENARIOS, simulate

# Every name but the config record is imported on first use (PEP 562): ``groundtrace gate run
# --help`` builds its options from :class:`Config` without numpy (the Bayes rule), the trace
# readers or the judges' and the executors' stacks (the run).
_LAZY: dict[str, str] = {
    "Decision": "._bayes",
    "CheckStatus": "._cases",
    **dict.fromkeys(("CurationReport", "curate"), "._curate"),
    "CaseDecision": "._decision",
    **dict.fromkeys(("BUILTIN_PROFILES", "Profile", "load_profile"), "._profile"),
    **dict.fromkeys(("change_lines", "reading"), "._reading"),
    "write_report": "._report",
    **dict.fromkeys(("GateReport", "GateResult", "verify_report"), "._run"),
    **dict.fromkeys(("ANALYSIS", "nothing_measured", "plan", "run", "verdicts"), "._shape"),
    **dict.fromkeys(("SCENARIOS", "simulate"), "._simulate"),
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


def _moved(module: str, *names: str) -> dict[str, str]:
    return {name: f"{__name__}.{module}.{name}" for name in names}


#: Names public before 0.2.0, served one more release with a DeprecationWarning: the gate's
#: internals (its layers, the Bayes rule, the snapshots) are its private modules'.
_OLD = {
    "GateRun": "GateResult",
    **_moved("_bayes", "BayesSettings", "Histogram", "RiskResult", "StratumCounts",
             "StratumRisk", "StratumThresholds", "compare", "decide", "most_severe"),
    **_moved("_cases", "CaseOutcome", "CheckResult", "RetrievedItem"),
    **_moved("_changes", "CaseChange", "ChangeKind", "FailureChanges", "compare_cases"),
    **_moved("_checks", "deterministic_checks", "gold_unmatched"),
    **_moved("_curate", "CurationFinding", "scan_case_file"),
    **_moved("_decision", "RunDecision", "decide_case", "decide_run"),
    **_moved("_guardrails", "BUILTIN_RULES", "Rule", "run_guardrails"),
    **_moved("_judge_layer", "JUDGE_MODES", "JudgeLayer", "JudgeSnapshot", "JudgeVerdict",
             "VerdictError", "eligibility", "judge_checks", "judge_snapshot", "judge_verdicts"),
    **_moved("_match", "SynonymMatcher", "fold"),
    **_moved("_path_layer", "PathSnapshot", "PathVerdict", "path_checks", "path_snapshot"),
    **_moved("_run", "EXIT_CODES", "DatasetSnapshot", "Snapshots", "code_version", "evaluate",
             "outcomes_from_traces"),
    **_moved("_shape", "GateCase", "GatePlan", "blocking_findings"),
    **_moved("_simulate", "Scenario", "SimulationCell"),
}  # fmt: skip
_renamed = renamed(__name__, _OLD, since="0.2.0", remove_in="0.3.0")


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        return _renamed(name)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
