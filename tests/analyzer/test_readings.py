"""The plain-language readings follow the numbers they are given (nothing canned).

Each analysis's ``reading`` (its package's public name, beside its report) reads its result or
the record its report wrote.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer import audit, gate, interventions, judge, paths, read
from groundtrace.analyzer.audit import AuditResult
from groundtrace.analyzer.gate import GateReport
from groundtrace.analyzer.interventions import InterventionSummary
from groundtrace.analyzer.judge import JudgeValidation
from groundtrace.analyzer.paths import PathReport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
replace = msgspec.structs.replace


def _axis(summary: InterventionSummary, op: str, axis: str, **changes: object):
    operator = summary.operators[op]
    effect = replace(operator.axes[axis], **changes)
    axes = {**operator.axes, axis: effect}
    return replace(summary, operators={**summary.operators, op: replace(operator, axes=axes)})


def test_interventions_reading_cites_the_effects_and_their_intervals() -> None:
    fixture = read(FIXTURES / "interventions_summary.json", InterventionSummary)
    # both axes of the fixture: the interval excludes 0 but the p-value is not below 0.05
    text = interventions.reading(fixture)
    assert "replayed 4 item(s) (5 units, 1 failed" in text
    assert "Effects whose" not in text and "no effect is established" in text
    assert (
        "Interval and p-value disagree (not called an effect; more items would tell): REMOVE: "
        "correctness 0.900 → 0.400 (Δ 0.625, CI 0.250 to 1.000, p 0.250), "
        "D 0.300 (CI 0.100 to 0.500, p 0.060)."
    ) in text

    summary = _axis(_axis(fixture, "REMOVE", "correctness", p_value=0.01), "REMOVE",
                    "divergence", p_value=0.02)  # fmt: skip
    text = interventions.reading(summary)
    assert "Effects whose 95% interval excludes 0 and whose p-value is below 0.05" in text
    assert "REMOVE: correctness 0.900 → 0.400 (Δ 0.625, CI 0.250 to 1.000, p 0.010)" in text
    assert "D 0.300 (CI 0.100 to 0.500, p 0.020)" in text
    assert "disagree" not in text

    wider = _axis(summary, "REMOVE", "correctness", mean_delta=0.2, ci_low=-0.1, ci_high=0.5,
                  p_value=0.4)  # fmt: skip
    changed = interventions.reading(wider)
    assert "correctness" not in changed
    assert "REMOVE: D 0.300 (CI 0.100 to 0.500, p 0.020)" in changed

    # an interval that includes 0 beside a p-value below 0.05 disagrees too
    split = _axis(wider, "REMOVE", "correctness", p_value=0.03)
    assert "disagree (not called an effect; more items would tell): REMOVE: correctness" in (
        interventions.reading(split)
    )

    flat = _axis(wider, "REMOVE", "divergence", ci_low=0.0, ci_high=0.5, p_value=0.3)
    assert "No operator moved any axis beyond its 95% interval" in (interventions.reading(flat))
    bigger = _axis(summary, "REMOVE", "divergence", mean_delta=0.71, ci_low=0.6, ci_high=0.8)
    assert "D 0.710 (CI 0.600 to 0.800, p 0.020)" in interventions.reading(bigger)


def test_gate_reading_places_rho_against_the_thresholds() -> None:
    report = read(FIXTURES / "gate_report.json", GateReport)
    text = gate.reading(report)
    assert "blocks the candidate (exit code 20)" in text
    assert "ρ = 0.955" in text and "at or above the block threshold 0.8" in text
    assert "−0.375 (95% CI −0.737 to 0.030, which includes 0)" in text
    assert "3 promote and 3 manual review" in text

    stats = report.statistics
    assert stats is not None
    calm = replace(report, statistics=replace(stats, rho=0.12, difference_ci95=(0.05, 0.3)))
    text = gate.reading(calm)
    assert "ρ = 0.120" in text and "below the review threshold 0.5" in text
    assert "which excludes 0" in text

    unmeasured = replace(report, statistics=None, statistics_note="fewer than 5 cases")
    assert "not evaluable: fewer than 5 cases" in gate.reading(unmeasured)


def test_paths_reading_counts_masked_failures() -> None:
    report = read(FIXTURES / "paths_report.json", PathReport)
    text = paths.reading(report)
    # one of the 3 cases is not required: the words count the cases the rate is over
    assert "checked on 2 of 3 case(s)" in text and "passes in 1 of 2 (rate 0.500" in text
    assert "1 of them are not required (require_path = false)" in text
    assert "1 case(s) have a correct text answer over a failed path" in text
    assert "most frequent failure is missing_command (1 case(s))" in text

    clean = replace(report, metrics=replace(report.metrics, masked_failures=()))
    assert "no masked failures" in paths.reading(clean)


def test_judge_reading_says_whether_kappa_is_beyond_chance() -> None:
    validation = read(FIXTURES / "judge_validation.json", JudgeValidation)
    text = judge.reading(validation)
    assert "validated on 40 of 40" in text and "κ against gold is 1.000" in text
    assert "agreement beyond chance" in text and "review-only" in text

    weak = replace(validation, kappa=replace(validation.kappa, value=0.1, ci_low=-0.2, ci_high=0.4))
    text = judge.reading(weak)
    assert "κ against gold is 0.100 (95% CI −0.200 to 0.400, which includes 0)" in text
    assert "cannot be told from chance" in text


@pytest.fixture(scope="module")
def audit_run(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.audit import ANALYSIS
    from groundtrace.examples.license_audit.audit import licence_config

    out = tmp_path_factory.mktemp("audit")
    done = run_analysis(ANALYSIS, licence_config(out, max_sources=3), out=out)
    assert done.result is not None
    return done.result


def test_audit_reading_follows_the_run(audit_run: AuditResult) -> None:
    s = audit_run.summary
    text = audit.reading(audit_run)
    assert f"{len(audit_run.questions)} question(s) from {len(audit_run.sources)} source(s)" in text
    assert f"({s.n_answers} answers) and labelled {s.n_pairs} source pair(s)" in text

    overall = replace(s.overall, n_present=20, n_disagree=5, prevalence=0.25)
    changed = replace(audit_run, summary=replace(s, overall=overall))
    assert "(20 pairs), 5 disagree (prevalence 25.0%)" in audit.reading(changed)

    nothing = replace(s.overall, n_present=0, n_disagree=0, prevalence=None)
    silent = replace(audit_run, summary=replace(s, overall=nothing))
    assert "disagreement is not measured" in audit.reading(silent)
