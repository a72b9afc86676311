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
    RiskResult,
    StratumCounts,
    StratumRisk,
    StratumThresholds,
    compare,
    decide,
    most_severe,
)
from ._profile import BUILTIN_PROFILES, Profile, load_profile
from ._simulate import SCENARIOS, Scenario, SimulationCell, simulate

__all__ = [
    "BUILTIN_PROFILES",
    "SCENARIOS",
    "BayesSettings",
    "Decision",
    "Profile",
    "RiskResult",
    "Scenario",
    "SimulationCell",
    "StratumCounts",
    "StratumRisk",
    "StratumThresholds",
    "compare",
    "decide",
    "load_profile",
    "most_severe",
    "simulate",
]
