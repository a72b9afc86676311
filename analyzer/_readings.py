"""One-paragraph plain-language readings of the analyses' results, generated from the numbers.

Each function reads one result record and says what it means, citing its figures and whether
each 95% interval excludes 0. Nothing here is canned: a reading changes with the numbers it
is given. The demo prints each reading under its table and the HTML reports include it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundtrace.analyzer.audit import AuditRun
    from groundtrace.analyzer.gate import GateReport
    from groundtrace.analyzer.interventions import InterventionSummary
    from groundtrace.analyzer.judge import JudgeValidation
    from groundtrace.analyzer.paths import PathReport

__all__ = [
    "audit_reading",
    "gate_reading",
    "interventions_reading",
    "judge_reading",
    "paths_reading",
]

#: Axes of the interventions, in reading order, with the phrase used for each.
_AXIS_WORDS = {
    "correctness": "correctness",
    "f1": "token F1",
    "grounding": "grounding",
    "calibration_error": "calibration error",
    "divergence": "D",
}


def _num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` decimals; a non-zero value that would round to 0 keeps 2 digits."""
    shown = f"{x:.2g}" if 0 < abs(x) < 10**-digits else f"{x:.{digits}f}"
    return shown.replace("-", "−")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _excludes_zero(low: float | None, high: float | None) -> bool | None:
    if low is None or high is None:
        return None
    return low > 0 or high < 0


def _ci(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "no interval could be computed"
    return f"95% CI {_num(low)} to {_num(high)}"


def _interval(low: float | None, high: float | None) -> str:
    """ "95% CI a to b, which excludes 0" (or includes 0, or no interval)."""
    side = _excludes_zero(low, high)
    if side is None or low is None or high is None:
        return "no interval could be computed"
    return f"95% CI {_num(low)} to {_num(high)}, which {'excludes' if side else 'includes'} 0"


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def interventions_reading(summary: InterventionSummary) -> str:
    """What the evidence interventions say about the evidence the system relied on."""
    calls = summary.calls
    failed = sum(summary.failed_units.values())
    parts = [
        f"The evidence interventions replayed {summary.items} item(s) "
        f"({calls.units_total} units, {failed} failed and left out)."
    ]
    reliable, flat = [], []
    for op, result in summary.operators.items():
        moved = []
        for axis, word in _AXIS_WORDS.items():
            e = result.axes.get(axis)
            if e is None or e.mean_delta is None or not _excludes_zero(e.ci_low, e.ci_high):
                continue
            ci = _ci(e.ci_low, e.ci_high).removeprefix("95% ")
            if axis == "divergence" or e.original_mean is None or e.intervened_mean is None:
                moved.append(f"{word} {_num(e.mean_delta)} ({ci})")
            else:
                moved.append(
                    f"{word} {_num(e.original_mean)} → {_num(e.intervened_mean)} "
                    f"(Δ {_num(e.mean_delta)}, {ci})"
                )
        if moved:
            reliable.append(f"{op}: {', '.join(moved)}")
        else:
            flat.append(op)
    n = max((e.n for r in summary.operators.values() for e in r.axes.values()), default=0)
    if reliable:
        parts.append(
            f"Effects whose 95% interval excludes 0 (Δ = original − intervened, n ≤ {n}): "
            + "; ".join(reliable)
            + ". Where removing or replacing evidence moves the answer, the system relied on "
            "that evidence."
        )
    else:
        parts.append(
            "No operator moved any axis beyond its 95% interval: on these items the answers do "
            f"not measurably depend on the evidence, or {n} item(s) are too few to tell."
        )
    if flat and reliable:
        parts.append(f"No axis moved beyond its interval for {_join(flat)}.")
    asserted = [role for role, v in summary.roles.aggregate.items() if v.asserted]
    if summary.roles.items:
        parts.append(
            f"Evidence roles over {summary.roles.items} item(s): "
            + (f"asserted {_join(asserted)}." if asserted else "no role is asserted.")
        )
    joint = summary.joint_ablation
    synergy = joint.mean_synergy
    if joint.n and synergy is not None and synergy.mean is not None:
        parts.append(
            f"Joint ablation on {joint.n} item(s): mean synergy {_num(synergy.mean)} "
            f"({_interval(synergy.ci_low, synergy.ci_high)})."
        )
    for op, why in summary.not_run.items():
        parts.append(f"{op} was asked for but {why}.")
    if summary.findings:
        parts.append(f"{len(summary.findings)} finding(s) on the data: {summary.findings[0]}.")
    if summary.nothing_measured:
        parts = [f"Nothing was measured: {summary.nothing_measured}."]
    return " ".join(parts)


def gate_reading(report: GateReport) -> str:
    """What the gate decided between the two versions, and why."""
    verbs = {
        "promote": "promotes the candidate",
        "block": "blocks the candidate",
        "manual_review": "asks for a manual review of the candidate",
        "not_evaluable": "cannot evaluate the candidate",
    }
    decision = report.decision.value
    parts = [f"The gate {verbs.get(decision, decision)} (exit code {report.exit_code})."]
    counts = {k: v for k, v in report.case_level.counts.items() if v}
    total = sum(report.case_level.counts.values())
    if total:
        shown = _join([f"{v} {k.replace('_', ' ')}" for k, v in counts.items()])
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
            f"The regression risk ρ = {_num(s.rho)} (the posterior probability that the "
            f"candidate's pass rate is more than δ = {s.delta} below the baseline's) is {where}; "
            f"the pass-rate difference (candidate − baseline) is {_num(s.difference_mean)} "
            f"({_interval(low, high)})."
        )
    reasons = list(report.case_level.reasons)
    if reasons:
        parts.append(f"Main reason: {reasons[0]}.")
    return " ".join(parts)


def paths_reading(report: PathReport) -> str:
    """What the command-path validation says beyond the text answers."""
    m = report.metrics
    parts = [f"Command paths were checked on {len(report.verdicts)} case(s)."]
    if report.not_applicable:
        parts.append(
            f"{report.not_applicable} of them are not applicable (no tool calls): no tool call "
            "ran and nothing was required, so they are neither path failures nor masked "
            "failures."
        )
    rate = m.path_pass_rate
    if rate.value is None:
        parts.append(f"No path pass rate could be measured ({rate.note}).")
    else:
        parts.append(
            f"The path passes in {int(rate.numerator)} of {int(rate.denominator)} "
            f"(rate {_num(rate.value)}, {_ci(rate.ci_low, rate.ci_high)})."
        )
    masked = len(m.masked_failures)
    if masked:
        parts.append(
            f"{masked} case(s) have a correct text answer over a failed path: a check on the "
            "text alone would have passed them (masked failures)."
        )
    elif rate.value is not None:
        parts.append("No correct text answer hides a failed path (no masked failures).")
    t, c = m.text_score, m.conditional_text_score
    if t.value is not None and c.value is not None:
        parts.append(
            f"The text score is {_num(t.value)} over all strict cases and {_num(c.value)} "
            "where the path passes."
        )
    unchecked = ("pass", "not_required", "not_applicable")
    failing = {k: v for k, v in m.status_counts.items() if k not in unchecked and v}
    if failing:
        top = max(failing.values())
        tied = sorted(k for k, v in failing.items() if v == top)
        if len(tied) == 1:
            parts.append(f"The most frequent failure is {tied[0]} ({top} case(s)).")
        else:
            parts.append(
                f"The {sum(failing.values())} path failure(s) spread over {len(failing)} "
                f"statuses, none more frequent than {top} case(s)."
            )
    return " ".join(parts)


def judge_reading(validation: JudgeValidation) -> str:
    """How far the judge can be trusted on its dimension."""
    parts = [
        f"The judge was validated on {validation.n} of {validation.n_items} gold item(s) "
        f"for {validation.dimension} ({validation.protocol_errors.count} protocol error(s), "
        "left out)."
    ]
    kappa = validation.kappa
    if kappa.value is None:
        parts.append(f"Cohen's κ is undefined here ({kappa.undefined_reason}).")
    else:
        beyond = _excludes_zero(kappa.ci_low, kappa.ci_high)
        meaning = (
            "agreement beyond chance" if beyond and kappa.value > 0
            else "worse than chance" if beyond
            else "agreement that cannot be told from chance"
        )  # fmt: skip
        parts.append(
            f"Cohen's κ against gold is {_num(kappa.value)} "
            f"({_interval(kappa.ci_low, kappa.ci_high)}): {meaning}."
        )
    raw = validation.raw_agreement
    if raw.value is not None:
        parts.append(f"Raw agreement is {_pct(raw.value)}.")
    parts.append(f"The gold set grades as {validation.grade.value}.")
    if validation.mode is not None:
        mode = validation.mode.replace("_", "-")
        parts.append(f"Verdict: {mode}.")
    return " ".join(parts)


def audit_reading(run: AuditRun) -> str:
    """What the multi-source audit found across the sources."""
    s = run.summary
    parts = [
        f"The audit answered {len(run.questions)} question(s) from {len(run.sources)} "
        f"source(s) ({s.n_answers} answers) and labelled {s.n_pairs} source pair(s)."
    ]
    absent = sum(f.n_absent for f in s.absence_by_source)
    if s.n_answers:
        parts.append(
            f"{absent} answer(s) ({_pct(absent / s.n_answers)}) found nothing in their source."
        )
    o = s.overall
    if o.prevalence is None:
        parts.append("No pair had both sources answering, so disagreement is not measured.")
    else:
        parts.append(
            f"Where both sources answer ({o.n_present} pairs), {o.n_disagree} disagree "
            f"(prevalence {_pct(o.prevalence)})."
        )
        measured = [f for f in s.by_question if f.prevalence is not None and f.n_disagree]
        if measured:
            top = max(measured, key=lambda f: (f.prevalence or 0.0, f.n_disagree))
            parts.append(
                f"Question {top.key} is the most contested ({top.n_disagree} of {top.n_present}"
                " pairs disagree)."
            )
    if s.prefilter_share is not None:
        parts.append(f"Pre-filters decided {_pct(s.prefilter_share)} of the pairs.")
    return " ".join(parts)
