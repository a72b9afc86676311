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
"""

from __future__ import annotations

from ._bayes import (
    BayesSettings,
    Decision,
    Histogram,
    RiskResult,
    StratumCounts,
    StratumRisk,
    StratumThresholds,
    compare,
)
from ._cases import CaseOutcome, CheckResult, CheckStatus, RetrievedItem
from ._changes import CaseChange, ChangeKind, FailureChanges, compare_cases
from ._checks import deterministic_checks
from ._decision import CaseDecision, RunDecision, decide_case, decide_run
from ._guardrails import BUILTIN_RULES, Rule, run_guardrails
from ._match import SynonymMatcher
from ._profile import BUILTIN_PROFILES, Profile, load_profile
from ._simulate import SCENARIOS, Scenario, SimulationCell, simulate

__all__ = [
    "BUILTIN_PROFILES",
    "BUILTIN_RULES",
    "SCENARIOS",
    "BayesSettings",
    "CaseChange",
    "CaseDecision",
    "CaseOutcome",
    "ChangeKind",
    "CheckResult",
    "CheckStatus",
    "Decision",
    "FailureChanges",
    "Histogram",
    "Profile",
    "RetrievedItem",
    "RiskResult",
    "Rule",
    "RunDecision",
    "Scenario",
    "SimulationCell",
    "StratumCounts",
    "StratumRisk",
    "StratumThresholds",
    "SynonymMatcher",
    "compare",
    "compare_cases",
    "decide_case",
    "decide_run",
    "deterministic_checks",
    "load_profile",
    "run_guardrails",
    "simulate",
]
