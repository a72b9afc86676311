"""The gate's plain-language reading (``gate.reading``) cites the report's numbers: the
decision and exit code, the case counts, ρ against the thresholds and the interval of the
pass-rate difference; it changes with them."""

from __future__ import annotations

from pathlib import Path

import msgspec

from groundtrace.analyzer import read
from groundtrace.analyzer.gate import GateReport, reading

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
replace = msgspec.structs.replace


def test_the_reading_places_rho_against_the_thresholds() -> None:
    report = read(FIXTURES / "gate_report.json", GateReport)
    text = reading(report)
    assert text.startswith("The gate blocks the candidate (exit code 20).")
    assert "ρ = 0.955" in text and "at or above the block threshold 0.8" in text
    assert "−0.375 (95% CI −0.737 to 0.030, which includes 0)" in text
    assert "3 promote and 3 manual review" in text

    stats = report.statistics
    assert stats is not None
    calm = replace(report, statistics=replace(stats, rho=0.12, difference_ci95=(0.05, 0.3)))
    text = reading(calm)
    assert "ρ = 0.120" in text and "below the review threshold 0.5" in text
    assert "which excludes 0" in text
    between = reading(replace(report, statistics=replace(stats, rho=0.6)))
    assert "between the review threshold 0.5 and the block threshold" in between

    unmeasured = replace(report, statistics=None, statistics_note="fewer than 5 cases")
    assert "not evaluable: fewer than 5 cases" in reading(unmeasured)
