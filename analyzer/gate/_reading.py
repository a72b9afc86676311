"""The gate's plain-language reading: what it decided between the two versions, and why.

Generated from the report's numbers (nothing canned): the decision and its exit code, the
candidate's case counts, the regression risk ρ against the profile's thresholds with the 95%
interval of the pass-rate difference, and the main case-level reason.
"""

from __future__ import annotations

from groundtrace.analyzer._wording import interval, join, num, some

from ._bayes import Decision, most_severe
from ._run import GateReport, GateResult

__all__ = ["change_lines", "reading"]

#: The reading's verb for each decision.
_VERBS = {
    "promote": "promotes the candidate",
    "block": "blocks the candidate",
    "manual_review": "asks for a manual review of the candidate",
    "not_evaluable": "cannot evaluate the candidate",
}


def reading(result: GateResult | GateReport) -> str:
    """What the gate decided between the two versions, and why.

    Args:
        result: a gate run (:func:`~groundtrace.analyzer.gate.run`) or its ``report.json``
            record (read back with ``groundtrace.analyzer.read(path, GateReport)``).
    """
    report = result.report if isinstance(result, GateResult) else result
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
            f"The pooled regression risk ρ = {num(s.rho)} (the posterior probability that the "
            f"candidate's pass rate is more than δ = {s.delta} below the baseline's) is {where}; "
            f"the pass-rate difference (candidate − baseline) is {num(s.difference_mean)} "
            f"({interval(low, high)})."
        )
        parts += _strata_sentences(report)
    parts += _changes_sentence(report)
    reasons = list(report.case_level.reasons)
    if reasons:
        parts.append(f"Main reason: {reasons[0]}.")
    return " ".join(parts)


def _strata_sentences(report: GateReport) -> list[str]:
    """The strata whose own thresholds (``bayes.strata``) escalate beyond the pooled risk."""
    s = report.statistics
    if s is None:
        return []
    out: list[str] = []
    for st in s.strata:
        if st.decision is None or st.rho is None or st.decision is s.pooled_decision:
            continue
        if most_severe([st.decision, s.pooled_decision]) is not st.decision:
            continue
        blocks = st.decision is Decision.BLOCK
        out.append(
            f"In the stratum {st.stratum}, ρ_c = {num(st.rho)} is at or above its own "
            f"{'block' if blocks else 'review'} threshold "
            f"{st.tau_block if blocks else st.tau_review} (δ_c = {st.delta}): "
            f"{st.decision.value.replace('_', ' ')}, stricter than the pooled "
            f"{s.pooled_decision.value.replace('_', ' ')}."
        )
    return out


def _changes_sentence(report: GateReport) -> list[str]:
    changes = report.changes
    if changes is None or not (changes.new or changes.known):
        return []
    failing = len(changes.new) + len(changes.known)
    return [
        f"Of the candidate's {failing} failing case(s), {len(changes.new)} are new (they did "
        f"not fail in the baseline) and {len(changes.known)} failed in the baseline too."
    ]


def change_lines(result: GateResult | GateReport, limit: int = 10) -> list[str]:
    """The candidate's new failures, known failures and fixed cases, one line each (with
    the first ``limit`` case ids and how many more): what a terminal shows beside the reading.
    """
    report = result.report if isinstance(result, GateResult) else result
    changes = report.changes
    if changes is None:
        return ["new and known failures: not recorded (a report of format 1.1)"]
    lines = []
    for title, items in (
        ("new failures (did not fail in the baseline)", changes.new),
        ("failing in the baseline too", changes.known),
        ("fixed (failed in the baseline)", changes.fixed),
    ):
        if items:
            lines.append(f"{title}: {len(items)}: {some([c.case_id for c in items], limit)}")
    return lines
