"""The gate's plain-language reading: what it decided between the two versions, and why.

Generated from the report's numbers (nothing canned): the decision and its exit code, the
candidate's case counts, the regression risk ρ against the profile's thresholds with the 95%
interval of the pass-rate difference, and the main case-level reason.
"""

from __future__ import annotations

from groundtrace.analyzer._wording import interval, join, num

from ._run import GateReport, GateRun

__all__ = ["reading"]

#: The reading's verb for each decision.
_VERBS = {
    "promote": "promotes the candidate",
    "block": "blocks the candidate",
    "manual_review": "asks for a manual review of the candidate",
    "not_evaluable": "cannot evaluate the candidate",
}


def reading(result: GateRun | GateReport) -> str:
    """What the gate decided between the two versions, and why.

    Args:
        result: a gate run (:func:`~groundtrace.analyzer.gate.run`) or its ``report.json``
            record (read back with ``groundtrace.analyzer.read(path, GateReport)``).
    """
    report = result.report if isinstance(result, GateRun) else result
    decision = report.decision.value
    parts = [f"The gate {_VERBS.get(decision, decision)} (exit code {report.exit_code})."]
    counts = {k: v for k, v in report.case_level.counts.items() if v}
    total = sum(report.case_level.counts.values())
    if total:
        shown = join([f"{v} {k.replace('_', ' ')}" for k, v in counts.items()])
        parts.append(f"Case by case, the candidate's {total} case(s) give {shown}.")
    s = report.statistics
    if s is None:
        parts.append(f"The statistical layer was not evaluable: {report.statistics_note}")
    else:
        low, high = s.difference_ci95
        if s.rho >= s.tau_block:
            where = f"at or above the block threshold {s.tau_block}"
        elif s.rho >= s.tau_review:
            where = f"between the review threshold {s.tau_review} and the block threshold"
        else:
            where = f"below the review threshold {s.tau_review}"
        parts.append(
            f"The regression risk ρ = {num(s.rho)} (the posterior probability that the "
            f"candidate's pass rate is more than δ = {s.delta} below the baseline's) is {where}; "
            f"the pass-rate difference (candidate − baseline) is {num(s.difference_mean)} "
            f"({interval(low, high)})."
        )
    reasons = list(report.case_level.reasons)
    if reasons:
        parts.append(f"Main reason: {reasons[0]}.")
    return " ".join(parts)
