"""The plain-language reading of an intervention run, generated from its numbers.

It cites each operator's effects whose 95% interval excludes 0, the evidence roles asserted,
the joint-ablation synergy and what was not run; nothing is canned: the reading changes with
the numbers it is given. ``groundtrace interventions`` prints it under its table and
``report.html`` includes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._wording import ci, excludes_zero, interval, join, num

from ._records import InterventionSummary

if TYPE_CHECKING:
    from ._run import RunResult

__all__ = ["reading", "summary_reading"]

#: Axes of the interventions, in reading order, with the phrase used for each.
_AXIS_WORDS = {
    "correctness": "correctness",
    "f1": "token F1",
    "grounding": "grounding",
    "calibration_error": "calibration error",
    "divergence": "D",
}


def summary_reading(summary: InterventionSummary) -> str:
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
            if e is None or e.mean_delta is None or not excludes_zero(e.ci_low, e.ci_high):
                continue
            shown = ci(e.ci_low, e.ci_high).removeprefix("95% ")
            if axis == "divergence" or e.original_mean is None or e.intervened_mean is None:
                moved.append(f"{word} {num(e.mean_delta)} ({shown})")
            else:
                moved.append(
                    f"{word} {num(e.original_mean)} → {num(e.intervened_mean)} "
                    f"(Δ {num(e.mean_delta)}, {shown})"
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
        parts.append(f"No axis moved beyond its interval for {join(flat)}.")
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


def reading(result: RunResult | InterventionSummary) -> str:
    """The reading of an intervention run (its result, or the ``summary.json`` it wrote)."""
    return summary_reading(result if isinstance(result, InterventionSummary) else result.summary)
