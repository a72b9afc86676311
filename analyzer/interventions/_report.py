"""Reports of an intervention run: ``summary.md`` (PR comment) and ``report.html``.

The HTML page is self-contained: plots are rendered with matplotlib (Agg) to inline PNGs --
mean Δ with its 95% CI per operator and axis, the role distribution -- followed by the
operator table, the weight-sensitivity table of D, the joint-ablation figures and a per-item
drill-down that puts the original and the counterfactual answers side by side (with the trace
ids of τ and τ̃).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundtrace.analyzer._results import to_builtins

from ._records import Estimate, InterventionSummary, JointResult, UnitRow

__all__ = ["operator_table_md", "write_reports"]

_AXES = ("correctness", "f1", "grounding", "calibration_error", "divergence")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def operator_table_md(summary: InterventionSummary) -> str:
    """Markdown table: per operator and axis, means, mean Δ, CI, p and n."""
    lines = [
        "| operator | axis | original | intervened | mean Δ | 95% CI | p | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for op, data in summary.operators.items():
        for axis, s in data.axes.items():
            ci = f"[{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]"
            lines.append(
                f"| {op} | {axis} | {_fmt(s.original_mean)} | {_fmt(s.intervened_mean)} "
                f"| {_fmt(s.mean_delta)} | {ci} | {_fmt(s.p_value, 4)} | {s.n} |"
            )
    return "\n".join(lines)


def _estimate_md(name: str, s: Estimate | None) -> list[str]:
    if s is None:
        return []
    return [f"| {name} | {_fmt(s.mean)} | [{_fmt(s.ci_low)}, {_fmt(s.ci_high)}] | {s.n} |"]


def _joint_md(joint: JointResult) -> list[str]:
    if not joint.n:
        return ["No item was eligible for joint ablation (two gold supports in R, a reference)."]
    lines = ["| figure | mean | 95% CI | n |", "|---|---|---|---|"]
    for name in ("mean_drop_first", "mean_drop_second", "mean_drop_joint", "mean_synergy",
                 "positive_synergy_rate", "strong_complementarity_rate"):  # fmt: skip
        lines += _estimate_md(name, getattr(joint, name))
    shap = joint.shapley
    if shap is not None:
        lines += _estimate_md("shapley mean_phi_best_ranked_support",
                              shap.mean_phi_best_ranked_support)  # fmt: skip
        lines += _estimate_md("shapley mean_phi_second_support", shap.mean_phi_second_support)
        lines += _estimate_md("shapley mean_total_phi", shap.mean_total_phi)
    return lines


def summary_markdown(summary: InterventionSummary) -> str:
    """The whole ``summary.md``."""
    calls = summary.calls
    out = [
        "# Evidence interventions",
        "",
        f"Items: {summary.items} · replay: {calls.mode} · units: "
        f"{calls.units_total} ({calls.run_now} run now, "
        f"{calls.from_journal} from the journal) · model calls made: "
        f"{calls.model_calls_made}, served from cache: {calls.served_from_cache}",
        f"Failed units (excluded from statistics): {summary.failed_units or 'none'}"
        + (f" — kinds {summary.failure_kinds}" if summary.failure_kinds else ""),
        f"Gold: {summary.gold}",
        "",
        "## Δ per operator and axis (Δ = original − intervened; D tested one-sided)",
        "",
        operator_table_md(summary),
        "",
    ]
    if summary.skipped_axes:
        out += ["Skipped axes:", ""]
        out += [f"- {axis}: {why}" for axis, why in summary.skipped_axes.items()]
        out.append("")
    out += ["## Weight sensitivity of D", "", "| operator | weights | mean D | 95% CI |",
            "|---|---|---|---|"]  # fmt: skip
    for row in summary.weight_sensitivity:
        s = row.summary
        out.append(
            f"| {row.operator} | {row.weights_name} | {_fmt(s.mean)} | "
            f"[{_fmt(s.ci_low)}, {_fmt(s.ci_high)}] |"
        )
    roles = summary.roles
    out += ["", "## Evidence roles", "", f"Items: {roles.items}; per-item counts: "
            f"{roles.counts}"]  # fmt: skip
    for role, agg in roles.aggregate.items():
        r = agg.rate
        out.append(
            f"- {role}: {'asserted' if agg.asserted else 'not asserted'} (rate "
            f"{_fmt(r.mean)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]; {agg.rule})"
        )
    out += ["", "## Joint ablation", "", *_joint_md(summary.joint_ablation), ""]
    out += ["## Seeds and settings", "", f"`{to_builtins(summary.seeds)}`", ""]
    return "\n".join(out)


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(summary: InterventionSummary) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images: list[tuple[str, str]] = []
    ops = summary.operators
    axes = [a for a in _AXES if any(a in d.axes for d in ops.values())]
    if ops and axes:
        fig, grid = plt.subplots(1, len(axes), figsize=(3.2 * len(axes), 3.4), squeeze=False)
        for ax, axis in zip(grid[0], axes, strict=True):
            effects = [(op, d.axes.get(axis)) for op, d in ops.items()]
            shown = [
                (op, e.mean_delta, e.ci_low, e.ci_high)
                for op, e in effects
                if e is not None and e.mean_delta is not None
            ]
            names = [op for op, *_ in shown]
            means = [m for _, m, _, _ in shown]
            lows = [m - (lo if lo is not None else m) for _, m, lo, _ in shown]
            highs = [(hi if hi is not None else m) - m for _, m, _, hi in shown]
            ax.errorbar(means, range(len(names)), xerr=[lows, highs], fmt="o", capsize=3)
            ax.axvline(0.0, color="grey", lw=0.8)
            ax.set_yticks(range(len(names)), names, fontsize=7)
            ax.set_title("D" if axis == "divergence" else f"Δ {axis}", fontsize=9)
        fig.tight_layout()
        images.append(("Mean Δ with 95% CI per operator and axis", _png(fig)))
        plt.close(fig)
    counts = summary.roles.counts
    if counts:
        fig, ax = plt.subplots(figsize=(5, 2.8))
        ax.barh(list(counts), list(counts.values()))
        ax.set_xlabel("items")
        fig.tight_layout()
        images.append(("Evidence roles (per-item counts)", _png(fig)))
        plt.close(fig)
    return images


def _drill_down(rows: Sequence[UnitRow], limit: int = 400) -> str:
    cells = []
    for row in rows[:limit]:
        cf, orig, err = row.counterfactual, row.original, row.error
        failed = None if err is None else {"kind": err.kind, "message": err.message}
        cells.append(
            "<tr>" + "".join(
                f"<td>{html.escape(_fmt(v))}</td>"
                for v in (
                    row.case_id, row.operator, row.target_id, row.replacement_id,
                    row.reference_answer, orig.answer, orig.confidence,
                    f"FAILED: {failed}" if failed else (cf.answer if cf else None),
                    cf.confidence if cf else None, row.divergence,
                    f"{orig.trace_id} → {cf.trace_id if cf else None}",
                )
            ) + "</tr>"
        )  # fmt: skip
    head = "".join(
        f"<th>{h}</th>"
        for h in ("case", "operator", "target", "replacement", "reference", "original answer",
                  "c", "counterfactual answer", "c̃", "D", "τ → τ̃")
    )  # fmt: skip
    more = f"<p>{len(rows) - limit} more rows in results.jsonl</p>" if len(rows) > limit else ""
    return f"<table><tr>{head}</tr>{''.join(cells)}</table>{more}"


def _md_table_html(md: str) -> str:
    lines = [line for line in md.splitlines() if line.startswith("|")]
    out = []
    for i, line in enumerate(lines):
        if i == 1:
            continue
        tag = "th" if i == 0 else "td"
        cells = [c.strip() for c in line.strip("|").split("|")]
        out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>")
    return "<table>" + "".join(out) + "</table>"


def report_html(summary: InterventionSummary, rows: Sequence[UnitRow]) -> str:
    """The self-contained HTML page."""
    images = "".join(
        f"<h3>{html.escape(title)}</h3><img alt='{html.escape(title)}' "
        f"src='data:image/png;base64,{data}'/>"
        for title, data in _plots(summary)
    )
    md = summary_markdown(summary)
    joint = _md_table_html("\n".join(_joint_md(summary.joint_ablation)))
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}"
    )
    header = "".join(f"<p>{html.escape(line)}</p>" for line in md.splitlines()[2:6] if line)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>groundtrace interventions"
        f"</title><style>{style}</style></head><body><h1>Evidence interventions</h1>{header}"
        f"{images}<h2>Operators</h2>{_md_table_html(operator_table_md(summary))}"
        f"<h2>Joint ablation</h2>{joint}<h2>Per-item drill-down</h2>{_drill_down(rows)}"
        "</body></html>"
    )


def write_reports(out: Path, summary: InterventionSummary, rows: Sequence[UnitRow]) -> None:
    """Write ``summary.md`` and ``report.html`` into ``out``."""
    (out / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
    (out / "report.html").write_text(report_html(summary, rows), encoding="utf-8")
