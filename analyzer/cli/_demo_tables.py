"""The demo's compact interventions table (one row per operator, one column per axis) and its
attribution lines (one per answer: its top evidence and what the answer became without it).

Each cell of the table holds two lines, the mean change and its p on the first, the 95% CI on
the second, so that the table fits a 120-column terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from rich.table import Table

if TYPE_CHECKING:
    from groundtrace.analyzer.attribution import AttributionResult
    from groundtrace.analyzer.interventions import Estimate, InterventionSummary

__all__ = ["attribution_lines", "interventions_table", "roles_and_joint_lines"]

#: Columns: the axes of SPEC 4.2.1 then the trace divergence D.
AXES: Final = (
    ("correctness", "correctness"),
    ("grounding", "grounding"),
    ("calibration_error", "calib. error"),
    ("f1", "F1"),
    ("divergence", "D"),
)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _cell(
    delta: float | None, low: float | None, high: float | None, p: float | None, sep: str = "\n"
) -> str:
    if delta is None:
        return "not measured"
    shown_p = "-" if p is None else f"{p:.3f}"
    return f"{_num(delta)} p={shown_p}{sep}[{_num(low)}, {_num(high)}]"


def _estimate(estimate: Estimate) -> str:
    return _cell(estimate.mean, estimate.ci_low, estimate.ci_high, estimate.p_value, " ")


def interventions_table(summary: InterventionSummary) -> Table:
    """Each operator's mean change per axis with its p and 95% CI, and the items n."""
    table = Table(
        title="evidence interventions: mean Δ = original - intervened, p, [95% CI]",
        caption="D: trace divergence (≥ 0, one-sided p); p: paired sign-flip permutation",
        show_lines=True,
    )
    table.add_column("operator")
    for _, label in AXES:
        table.add_column(label, justify="right")
    table.add_column("n", justify="right")
    for name, result in summary.operators.items():
        cells = []
        for axis, _ in AXES:
            effect = result.axes.get(axis)
            cells.append(
                "not measured"
                if effect is None
                else _cell(effect.mean_delta, effect.ci_low, effect.ci_high, effect.p_value)
            )
        table.add_row(name, *cells, str(result.n_items))
    return table


def roles_and_joint_lines(summary: InterventionSummary) -> list[str]:
    """The evidence roles found and, when eligible, the joint ablation of two items."""
    roles = summary.roles
    counts = ", ".join(f"{role} {count}" for role, count in sorted(roles.counts.items()))
    lines = [f"roles over {roles.items} items: {counts or 'none assigned'}"]
    joint = summary.joint_ablation
    if joint.n > 0 and joint.mean_drop_joint is not None:
        line = f"joint ablation over {joint.n} items: mean drop {_estimate(joint.mean_drop_joint)}"
        if joint.mean_synergy is not None:
            line += f"; synergy {_estimate(joint.mean_synergy)}"
        lines.append(line)
    elif "JOINT_REMOVE" not in summary.seeds.operators:
        lines.append("joint ablation: not run (add --operators JOINT)")
    else:
        lines.append("joint ablation: not eligible (no item with two used evidence items)")
    return lines


def attribution_lines(result: AttributionResult) -> list[str]:
    """One line per attributed answer: its top evidence (the highest score; ties: prompt
    order) and, in the behavioural tier, the answer replayed without it."""
    lines = []
    for row in result.rows:
        if not row.sources:
            continue
        best = max(row.sources, key=lambda s: s.score)
        line = f"  {row.case_id or row.trace_id}: top evidence {best.id} (score {best.score:.2f})"
        if best.answer_without is not None:
            line += f": {row.answer!r} -> {best.answer_without!r} without it"
        lines.append(line)
    return lines
