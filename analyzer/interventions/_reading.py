"""The plain-language reading of an intervention run, generated from its numbers.

It cites each operator's effects whose 95% interval excludes 0 and whose p-value is below 0.05
(the two agree), names apart the effects where interval and p-value disagree (neither is
called an effect), the evidence roles asserted,
the joint-ablation synergy and what was not run; nothing is canned: the reading changes with
the numbers it is given. ``groundtrace interventions`` prints it under its table and
``report.html`` includes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._wording import ci, excludes_zero, interval, join, num

from ._records import AxisEffect, InterventionSummary

if TYPE_CHECKING:
    from ._run import InterventionsResult

__all__ = ["reading", "summary_reading"]

#: The p-value below which a test says "moved", the complement of the intervals' 95%.
_ALPHA = 0.05

#: Axes of the interventions, in reading order, with the phrase used for each.
_AXIS_WORDS = {
    "correctness": "correctness",
    "f1": "token F1",
    "grounding": "grounding",
    "calibration_error": "calibration error",
    "divergence": "D",
}


def _moved(e: AxisEffect) -> tuple[bool, bool]:
    """(whether the interval excludes 0, whether the p-value agrees with it)."""
    excluded = bool(excludes_zero(e.ci_low, e.ci_high))
    return excluded, e.p_value is None or (e.p_value < _ALPHA) == excluded


def _effect(word: str, e: AxisEffect, delta: float) -> str:
    """``word`` and the figures of ``e``: means, Δ, its interval and p-value."""
    shown = ci(e.ci_low, e.ci_high).removeprefix("95% ")
    if e.p_value is not None:
        shown = f"{shown}, p {num(e.p_value)}"
    if word == "D" or e.original_mean is None or e.intervened_mean is None:
        return f"{word} {num(delta)} ({shown})"
    return f"{word} {num(e.original_mean)} → {num(e.intervened_mean)} (Δ {num(delta)}, {shown})"


def summary_reading(summary: InterventionSummary) -> str:
    """What the evidence interventions say about the evidence the system relied on."""
    calls = summary.calls
    failed = sum(summary.failed_units.values())
    parts = [
        f"The evidence interventions replayed {summary.items} item(s) "
        f"({calls.units_total} units, {failed} failed and left out)."
    ]
    reliable, flat, mixed = [], [], []
    for op, result in summary.operators.items():
        moved, unsure = [], []
        for axis, word in _AXIS_WORDS.items():
            e = result.axes.get(axis)
            if e is None or e.mean_delta is None:
                continue
            excluded, agree = _moved(e)
            if not agree:
                unsure.append(_effect(word, e, e.mean_delta))
            elif excluded:
                moved.append(_effect(word, e, e.mean_delta))
        if moved:
            reliable.append(f"{op}: {', '.join(moved)}")
        if unsure:
            mixed.append(f"{op}: {', '.join(unsure)}")
        if not moved and not unsure:
            flat.append(op)
    n = max((e.n for r in summary.operators.values() for e in r.axes.values()), default=0)
    if reliable:
        parts.append(
            f"Effects whose 95% interval excludes 0 and whose p-value is below {_ALPHA} "
            f"(Δ = original − intervened, n ≤ {n}): "
            + "; ".join(reliable)
            + ". Where removing or replacing evidence moves the answer, the system relied on "
            "that evidence."
        )
    elif mixed:
        parts.append(
            "No operator moved any axis with both its 95% interval excluding 0 and a p-value "
            f"below {_ALPHA}: no effect is established on these {n} item(s)."
        )
    else:
        parts.append(
            "No operator moved any axis beyond its 95% interval: on these items the answers do "
            f"not measurably depend on the evidence, or {n} item(s) are too few to tell."
        )
    if flat and (reliable or mixed):
        parts.append(f"No axis moved beyond its interval for {join(flat)}.")
    if mixed:
        parts.append(
            "Interval and p-value disagree (not called an effect; more items would tell): "
            + "; ".join(mixed)
            + "."
        )
    asserted = [role for role, v in summary.roles.aggregate.items() if v.asserted]
    if summary.roles.items:
        parts.append(
            f"Evidence roles over {summary.roles.items} item(s): "
            + (f"asserted {join(asserted)}." if asserted else "no role is asserted.")
        )
    joint = summary.joint_ablation
    synergy = joint.mean_synergy
    if joint.n and synergy is not None and synergy.mean is not None:
        parts.append(
            f"Joint ablation on {joint.n} item(s): mean synergy {num(synergy.mean)} "
            f"({interval(synergy.ci_low, synergy.ci_high)})."
        )
    for op, why in summary.not_run.items():
        parts.append(f"{op} was asked for but {why}.")
    if summary.findings:
        parts.append(f"{len(summary.findings)} finding(s) on the data: {summary.findings[0]}.")
    if summary.nothing_measured:
        parts = [f"Nothing was measured: {summary.nothing_measured}."]
    return " ".join(parts)


def reading(result: InterventionsResult | InterventionSummary) -> str:
    """The reading of an intervention run (its result, or the ``summary.json`` it wrote)."""
    return summary_reading(result if isinstance(result, InterventionSummary) else result.summary)
