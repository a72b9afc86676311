"""The plain-language reading of an intervention run, generated from its numbers.

It cites each operator's effects whose 95% interval excludes 0, the evidence roles asserted,
the joint-ablation synergy and what was not run; nothing is canned: the reading changes with
the numbers it is given. ``groundtrace interventions`` prints it under its table and
``report.html`` includes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

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


def _num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` decimals; a non-zero value that would round to 0 keeps 2 digits."""
    shown = f"{x:.2g}" if 0 < abs(x) < 10**-digits else f"{x:.{digits}f}"
    return shown.replace("-", "−")


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


def reading(result: RunResult | InterventionSummary) -> str:
    """The reading of an intervention run (its result, or the ``summary.json`` it wrote)."""
    return summary_reading(result if isinstance(result, InterventionSummary) else result.summary)
