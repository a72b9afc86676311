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

__all__ = ["operator_table_md", "write_reports"]

_AXES = ("correctness", "f1", "grounding", "calibration_error", "divergence")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def operator_table_md(summary: dict[str, Any]) -> str:
    """Markdown table: per operator and axis, means, mean Δ, CI, p and n."""
    lines = [
        "| operator | axis | original | intervened | mean Δ | 95% CI | p | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for op, data in summary.get("operators", {}).items():
        for axis, s in data["axes"].items():
            if axis in ("answer_changed_rate", "confidence_shift"):
                continue
            ci = f"[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}]"
            lines.append(
                f"| {op} | {axis} | {_fmt(s['original_mean'])} | {_fmt(s['intervened_mean'])} "
                f"| {_fmt(s['mean_delta'])} | {ci} | {_fmt(s['p_value'], 4)} | {s['n']} |"
            )
    return "\n".join(lines)


def _joint_md(joint: dict[str, Any]) -> list[str]:
    if not joint.get("n"):
        return ["No item was eligible for joint ablation (two gold supports in R, a reference)."]
    lines = ["| figure | mean | 95% CI | n |", "|---|---|---|---|"]
    for name, s in joint.items():
        if isinstance(s, dict) and "mean" in s:
            ci = f"[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}]"
            lines.append(f"| {name} | {_fmt(s['mean'])} | {ci} | {s['n']} |")
    shap = joint.get("shapley")
    if shap:
        for name in ("mean_phi_best_ranked_support", "mean_phi_second_support", "mean_total_phi"):
            s = shap[name]
            ci = f"[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}]"
            lines.append(f"| shapley {name} | {_fmt(s['mean'])} | {ci} | {s['n']} |")
    return lines


def summary_markdown(summary: dict[str, Any]) -> str:
    """The whole ``summary.md``."""
    calls = summary.get("calls", {})
    out = [
        "# Evidence interventions",
        "",
        f"Items: {summary.get('items')} · replay: {calls.get('mode')} · units: "
        f"{calls.get('units_total')} ({calls.get('run_now')} run now, "
        f"{calls.get('from_journal')} from the journal) · model calls made: "
        f"{calls.get('model_calls_made')}, served from cache: {calls.get('served_from_cache')}",
        f"Failed units (excluded from statistics): {summary.get('failed_units') or 'none'}"
        + (f" — kinds {summary['failure_kinds']}" if summary.get("failure_kinds") else ""),
        f"Gold: {summary.get('gold')}",
        "",
        "## Δ per operator and axis (Δ = original − intervened; D tested one-sided)",
        "",
        operator_table_md(summary),
        "",
    ]
    if summary.get("skipped_axes"):
        out += ["Skipped axes:", ""]
        out += [f"- {axis}: {why}" for axis, why in summary["skipped_axes"].items()]
        out.append("")
    out += ["## Weight sensitivity of D", "", "| operator | weights | mean D | 95% CI |",
            "|---|---|---|---|"]  # fmt: skip
    for row in summary.get("weight_sensitivity", []):
        s = row["summary"]
        out.append(
            f"| {row['operator']} | {row['weights_name']} | {_fmt(s['mean'])} | "
            f"[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}] |"
        )
    roles = summary.get("roles", {})
    out += ["", "## Evidence roles", "", f"Items: {roles.get('items', 0)}; per-item counts: "
            f"{roles.get('counts', {})}"]  # fmt: skip
    for role, agg in roles.get("aggregate", {}).items():
        r = agg["rate"]
        out.append(
            f"- {role}: {'asserted' if agg['asserted'] else 'not asserted'} (rate "
            f"{_fmt(r['mean'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]; {agg['rule']})"
        )
    out += ["", "## Joint ablation", "", *_joint_md(summary.get("joint_ablation", {})), ""]
    seeds = summary.get("seeds", {})
    out += ["## Seeds and settings", "", f"`{seeds}`", ""]
    return "\n".join(out)


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(summary: dict[str, Any]) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images: list[tuple[str, str]] = []
    ops = summary.get("operators", {})
    axes = [a for a in _AXES if any(a in d["axes"] for d in ops.values())]
    if ops and axes:
        fig, grid = plt.subplots(1, len(axes), figsize=(3.2 * len(axes), 3.4), squeeze=False)
        for ax, axis in zip(grid[0], axes, strict=True):
            names = [
                op for op, d in ops.items() if d["axes"].get(axis, {}).get("mean_delta") is not None
            ]
            means = [ops[op]["axes"][axis]["mean_delta"] for op in names]
            lows = [m - ops[op]["axes"][axis]["ci_low"] for op, m in zip(names, means, strict=True)]
            highs = [
                ops[op]["axes"][axis]["ci_high"] - m for op, m in zip(names, means, strict=True)
            ]
            ax.errorbar(means, range(len(names)), xerr=[lows, highs], fmt="o", capsize=3)
            ax.axvline(0.0, color="grey", lw=0.8)
            ax.set_yticks(range(len(names)), names, fontsize=7)
            ax.set_title("D" if axis == "divergence" else f"Δ {axis}", fontsize=9)
        fig.tight_layout()
        images.append(("Mean Δ with 95% CI per operator and axis", _png(fig)))
        plt.close(fig)
    counts = summary.get("roles", {}).get("counts", {})
    if counts:
        fig, ax = plt.subplots(figsize=(5, 2.8))
        ax.barh(list(counts), list(counts.values()))
        ax.set_xlabel("items")
        fig.tight_layout()
        images.append(("Evidence roles (per-item counts)", _png(fig)))
        plt.close(fig)
    return images


def _drill_down(rows: Sequence[dict[str, Any]], limit: int = 400) -> str:
    cells = []
    for row in rows[:limit]:
        cf = row.get("counterfactual") or {}
        orig = row.get("original") or {}
        err = row.get("error")
        cells.append(
            "<tr>" + "".join(
                f"<td>{html.escape(_fmt(v))}</td>"
                for v in (
                    row.get("case_id"), row["operator"], row.get("target_id"),
                    row.get("replacement_id"), row.get("reference_answer"), orig.get("answer"),
                    orig.get("confidence"), cf.get("answer") if not err else f"FAILED: {err}",
                    cf.get("confidence"), row.get("divergence"),
                    f"{orig.get('trace_id')} → {cf.get('trace_id')}",
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


def report_html(summary: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    """The self-contained HTML page."""
    images = "".join(
        f"<h3>{html.escape(title)}</h3><img alt='{html.escape(title)}' "
        f"src='data:image/png;base64,{data}'/>"
        for title, data in _plots(summary)
    )
    md = summary_markdown(summary)
    joint = _md_table_html("\n".join(_joint_md(summary.get("joint_ablation", {}))))
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


def write_reports(out: Path, summary: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
    """Write ``summary.md`` and ``report.html`` into ``out``."""
    (out / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
    (out / "report.html").write_text(report_html(summary, rows), encoding="utf-8")
