"""The gate's public surface is its shape, the records a user reads and the functions its
commands use; every name it exported before 0.2.0 still imports for one release, warning
where it went (``GateRun`` is ``GateResult``; the internals are the private modules')."""

from __future__ import annotations

import importlib
import warnings

import pytest

import groundtrace.analyzer.gate as gate
from groundtrace.analyzer.gate._bayes import compare
from groundtrace.analyzer.gate._run import GateResult, evaluate

#: ``groundtrace.analyzer.gate.__all__`` before 0.2.0 (74 names).
BEFORE = (
    "ANALYSIS BUILTIN_PROFILES BUILTIN_RULES EXIT_CODES JUDGE_MODES SCENARIOS BayesSettings "
    "CaseChange CaseDecision CaseOutcome ChangeKind CheckResult CheckStatus Config "
    "CurationFinding CurationReport DatasetSnapshot Decision FailureChanges GateCase GatePlan "
    "GateReport GateRun Histogram JudgeLayer JudgeSnapshot JudgeVerdict PathSnapshot "
    "PathVerdict Profile RetrievedItem RiskResult Rule RunDecision Scenario SimulationCell "
    "Snapshots StratumCounts StratumRisk StratumThresholds SynonymMatcher VerdictError "
    "blocking_findings change_lines code_version compare compare_cases curate decide "
    "decide_case decide_run deterministic_checks eligibility evaluate fold gold_unmatched "
    "judge_checks judge_snapshot judge_verdicts load_profile most_severe nothing_measured "
    "outcomes_from_traces path_checks path_snapshot plan reading run run_guardrails "
    "scan_case_file simulate verdicts verify_report write_report"
).split()


def test_the_surface_is_the_shape_its_records_and_its_commands_functions() -> None:
    assert len(BEFORE) == 74 and len(gate.__all__) <= 22
    assert {"ANALYSIS", "Config", "plan", "run", "write_report", "reading", "nothing_measured",
            "verdicts", "GateResult", "GateReport"} <= set(gate.__all__)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a public name warns nothing
        for name in gate.__all__:
            assert getattr(gate, name) is not None


def test_the_result_is_named_gate_result_and_the_old_name_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"gate\.GateRun is deprecated since groundtrace "
                      r"0\.2\.0 and is removed in 0\.3\.0: use groundtrace\.analyzer\.gate"
                      r"\.GateResult"):  # fmt: skip
        assert gate.GateRun is GateResult


@pytest.mark.parametrize("name", sorted(set(BEFORE) - {"GateRun"}))
def test_a_name_dropped_from_the_surface_still_imports_with_a_warning(name: str) -> None:
    if name in gate.__all__:
        return
    with pytest.warns(DeprecationWarning, match=rf"use groundtrace\.analyzer\.gate\._\w+\.{name}$"):
        found = getattr(importlib.import_module("groundtrace.analyzer.gate"), name)
    home = importlib.import_module(f"groundtrace.analyzer.gate.{_home(name)}")
    assert found is getattr(home, name)


def _home(name: str) -> str:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        getattr(gate, name)
    return str(seen[0].message).rsplit(".", 2)[-2]


def test_the_old_imports_are_the_same_objects() -> None:
    with pytest.warns(DeprecationWarning):
        from groundtrace.analyzer.gate import compare as old_compare
        from groundtrace.analyzer.gate import evaluate as old_evaluate
    assert (old_compare, old_evaluate) == (compare, evaluate)
    with pytest.raises(AttributeError, match="no attribute 'GateRuns'"):
        gate.GateRuns
