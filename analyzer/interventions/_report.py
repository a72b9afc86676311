"""Reports of an intervention run: ``results.jsonl``, ``summary.json``, ``summary.md`` (PR
comment) and ``report.html``.

The HTML page is self-contained: plots are rendered with matplotlib (Agg) to inline PNGs --
mean Δ with its 95% CI per operator and axis, the role distribution -- followed by the
operator table, the weight-sensitivity table of D, the joint-ablation figures and a per-item
drill-down that puts the original and the counterfactual answers side by side (with the trace
ids of τ and τ̃).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._markdown import literal
from groundtrace.analyzer._results import encode, to_builtins, write
from groundtrace.analyzer.errors import ConfigError

from ._reading import summary_reading
from ._records import Estimate, InterventionSummary, JointResult, ReplayRow

if TYPE_CHECKING:
    from ._run import InterventionsResult

__all__ = ["operator_table_md", "write_report"]

_AXES = ("correctness", "f1", "grounding", "calibration_error", "divergence")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


_OPERATOR_HEADER = ("operator", "axis", "original", "intervened", "mean Δ", "95% CI", "p", "n")


def _operator_rows(summary: InterventionSummary) -> list[tuple[str, ...]]:
    return [
        (op, axis, _fmt(s.original_mean), _fmt(s.intervened_mean), _fmt(s.mean_delta),
         f"[{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]", _fmt(s.p_value, 4), str(s.n))
        for op, data in summary.operators.items()
        for axis, s in data.axes.items()
    ]  # fmt: skip


def _md_rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


_WEIGHTS_HEADER = ("operator", "weights", "mean D", "95% CI")


def _weight_rows(summary: InterventionSummary) -> list[tuple[str, ...]]:
    return [
        (row.operator, row.weights_name, _fmt(row.summary.mean),
         f"[{_fmt(row.summary.ci_low)}, {_fmt(row.summary.ci_high)}]")
        for row in summary.weight_sensitivity
    ]  # fmt: skip


def operator_table_md(summary: InterventionSummary) -> str:
    """Markdown table: per operator and axis, means, mean Δ, CI, p and n."""
    return "\n".join(_md_rows(_OPERATOR_HEADER, _operator_rows(summary)))


_JOINT_FIGURES = ("mean_drop_first", "mean_drop_second", "mean_drop_joint", "mean_synergy",
                  "positive_synergy_rate", "strong_complementarity_rate")  # fmt: skip
_NO_JOINT = "No item was eligible for joint ablation (two gold supports in R, a reference)."


def _joint_rows(joint: JointResult) -> list[tuple[str, ...]]:
    named: list[tuple[str, Estimate | None]] = [(n, getattr(joint, n)) for n in _JOINT_FIGURES]
    shap = joint.shapley
    if shap is not None:
        named += [
            ("shapley mean_phi_best_ranked_support", shap.mean_phi_best_ranked_support),
            ("shapley mean_phi_second_support", shap.mean_phi_second_support),
            ("shapley mean_total_phi", shap.mean_total_phi),
        ]
    return [
        (name, _fmt(e.mean), f"[{_fmt(e.ci_low)}, {_fmt(e.ci_high)}]", str(e.n))
        for name, e in named
        if e is not None
    ]


_JOINT_HEADER = ("figure", "mean", "95% CI", "n")


def _joint_md(joint: JointResult) -> list[str]:
    if not joint.n:
        return [_NO_JOINT]
    return _md_rows(_JOINT_HEADER, _joint_rows(joint))


def _findings_md(summary: InterventionSummary) -> list[str]:
    """Nothing measured, operators not run, data findings and unreadable trace lines."""
    out: list[str] = []
    if summary.nothing_measured:
        out += [f"**Nothing measured:** {summary.nothing_measured}.", ""]
    if summary.not_run:
        out += ["Operators not run:", ""]
        out += [f"- {op}: {why}" for op, why in summary.not_run.items()]
        out.append("")
    lines = [*summary.findings]
    if summary.input.read_errors:
        errors = summary.input.read_errors
        lines.append(
            f"{len(errors)} unreadable trace line(s) skipped: {'; '.join(errors[:5])}"
            + (" ..." if len(errors) > 5 else "")
        )
    if lines:
        out += ["Findings:", ""]
        out += [f"- {literal(line)}" for line in lines[:20]]
        if len(lines) > 20:
            out.append(f"- ... and {len(lines) - 20} more (summary.json)")
        out.append("")
    return out


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
    out += _findings_md(summary)
    out += ["## Weight sensitivity of D", ""]
    out += _md_rows(_WEIGHTS_HEADER, _weight_rows(summary))
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


def _plots(summary: InterventionSummary) -> list[h.Html]:
    plt = h.pyplot()
    if plt is None:
        return [h.no_plot("Plots")]
    images: list[h.Html] = []
    ops = summary.operators
    axes = [a for a in _AXES if any(a in d.axes for d in ops.values())]
    if ops and axes:
        cols = min(3, len(axes))
        rows = -(-len(axes) // cols)
        fig, grid = plt.subplots(
            rows, cols, figsize=h.figure_inches(cols, height=2.9 * rows), squeeze=False
        )
        for ax, axis in zip(grid.flat, axes, strict=False):
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
        for ax in list(grid.flat)[len(axes) :]:
            ax.set_visible(False)
        fig.tight_layout()
        title = "Mean Δ with 95% CI per operator and axis"
        images.append(h.join(h.heading(title), h.figure(fig, title)))
    counts = summary.roles.counts
    if counts:
        fig, ax = plt.subplots(figsize=(5, 2.8))
        ax.barh(list(counts), list(counts.values()))
        ax.set_xlabel("items")
        fig.tight_layout()
        title = "Evidence roles (per-item counts)"
        images.append(h.join(h.heading(title), h.figure(fig, title)))
    return images


_DRILL_HEADER = ("case", "operator", "target", "replacement", "reference", "original answer",
                 "c", "counterfactual answer", "c̃", "D", "τ → τ̃")  # fmt: skip


def _drill_down(rows: Sequence[ReplayRow], limit: int = 400) -> h.Html:
    """One row per replay unit; ids wrap inside their cells, so the table fits the page's width."""
    cells: list[list[object]] = []
    for row in rows[:limit]:
        cf, orig, err = row.counterfactual, row.original, row.error
        failed = None if err is None else {"kind": err.kind, "message": err.message}
        cells.append([
            h.ident(_fmt(row.case_id)), row.operator, h.ident(_fmt(row.target_id)),
            h.ident(_fmt(row.replacement_id)),
            *(_fmt(v) for v in (
                row.reference_answer, orig.answer, orig.confidence,
                f"FAILED: {failed}" if failed else (cf.answer if cf else None),
                cf.confidence if cf else None, row.divergence,
            )),
            h.ident(f"{orig.trace_id} → {cf.trace_id if cf else None}"),
        ])  # fmt: skip
    more = [f"{len(rows) - limit} more rows in results.jsonl"] if len(rows) > limit else []
    return h.join(h.table(_DRILL_HEADER, cells), h.paragraphs(more, cls="muted"))


def report_html(summary: InterventionSummary, rows: Sequence[ReplayRow]) -> str:
    """The self-contained HTML page."""
    md = summary_markdown(summary)
    joint = summary.joint_ablation
    return h.page(
        "Evidence interventions",
        h.paragraphs([line for line in md.splitlines()[2:6] if line], cls="muted"),
        h.reading(summary_reading(summary)),
        *_plots(summary),
        h.section("Operators", h.table(_OPERATOR_HEADER, _operator_rows(summary))),
        h.section("Weight sensitivity of D", h.table(_WEIGHTS_HEADER, _weight_rows(summary))),
        h.section(
            "Joint ablation",
            h.table(_JOINT_HEADER, _joint_rows(joint)) if joint.n else _NO_JOINT,
        ),
        h.section("Per-item drill-down", _drill_down(rows)),
    )


def write_report(result: InterventionsResult, out: Path) -> Path:
    """Write the run's records and reports into the folder ``out`` (created): ``results.jsonl``
    (one row per unit), ``summary.json``, ``summary.md`` and ``report.html``.

    Returns:
        ``out / "summary.json"``, the run's summary (read it back with
        :func:`groundtrace.analyzer.read` and :class:`InterventionSummary`).

    Raises:
        ConfigError: the folder cannot be created or written.
    """
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "results.jsonl").open("wb") as handle:
            for row in result.rows:
                handle.write(encode(row) + b"\n")
        write(folder / "summary.json", result.summary)
        (folder / "summary.md").write_text(summary_markdown(result.summary), encoding="utf-8")
        html = report_html(result.summary, result.rows)
        (folder / "report.html").write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the reports: {exc}", path=str(folder)) from exc
    return folder / "summary.json"
