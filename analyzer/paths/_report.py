"""Path reports: ``report.json``, ``summary.md`` (PR comment) and ``report.html``.

The HTML page is self-contained: the four-quadrant plot is inline SVG (no scripts, no
external assets).
"""

from __future__ import annotations

from pathlib import Path

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._markdown import literal
from groundtrace.analyzer._results import write

from ._applies import NO_TOOL_CALLS
from ._metrics import MetricValue
from ._outcome import PathsResult
from ._reading import reading
from ._run import PathReport
from ._types import CaseVerdict, PathStatus

__all__ = ["write_report"]

_QUADRANT_ORDER = (
    "text_correct|path_pass",
    "text_correct|path_fail",
    "text_incorrect|path_pass",
    "text_incorrect|path_fail",
)


def _fmt(metric: MetricValue) -> str:
    if metric.value is None:
        return f"n/a ({metric.note})"
    ci = f" [{metric.ci_low:.3f}, {metric.ci_high:.3f}]" if metric.ci_low is not None else ""
    return f"{metric.value:.3f}{ci} ({metric.numerator:g}/{metric.denominator:g})"


def _run_line(report: PathReport) -> str:
    s = report.metrics.settings
    return (
        f"{len(report.verdicts)} case run(s) · bootstrap B = {s.n_resamples}, seed {s.seed}, "
        f"{s.confidence:.0%} percentile intervals · quote threshold {report.quote_threshold}"
    )


def _first_issue(verdict: CaseVerdict) -> str:
    status = verdict.status.value
    return next((i["message"] for i in verdict.issues if i["status"] == status), "")


def _evidence(verdict: CaseVerdict) -> str:
    """What a case's row shows: its issues, or why it was not checked."""
    if verdict.status is PathStatus.NOT_APPLICABLE:
        return f"not applicable: {verdict.details.get('not_applicable', NO_TOOL_CALLS)}"
    return "\n".join(i["message"] for i in verdict.issues) or "–"


def _applicability(report: PathReport) -> list[str]:
    """The overall statement on what was not checked (empty when every run was)."""
    lines = []
    if report.nothing_measured is not None:
        lines.append(f"**Nothing measured**: {report.nothing_measured}.")
    if report.not_applicable:
        lines.append(
            f"**not applicable: {NO_TOOL_CALLS}** in {report.not_applicable} of "
            f"{len(report.verdicts)} case run(s): no tool call ran and the case requires no "
            "read, call or value, so there is no command path to check (not counted as path "
            "failures or masked failures)."
        )
    return lines


def _notes(report: PathReport) -> list[str]:
    unverified = sum(len(v.details.get("unverified_quotes", [])) for v in report.verdicts)
    notes = list(report.notes)
    if unverified:
        notes.append(f"{unverified} quote(s) not verifiable: the reads carry no content")
    if report.missing_traces:
        notes.append(f"cases without a trace (not scored): {', '.join(report.missing_traces)}")
    for case_id, why in report.incomplete_traces.items():
        notes.append(f"case {case_id}: not evaluable, incomplete trace ({why})")
    unmatched = report.unmatched_count
    if unmatched is None:  # a report from before the count: every id is listed
        unmatched = len(report.unmatched_traces)
    if unmatched:
        notes.append(f"{unmatched} trace(s) with no case in the case file")
    return notes


def _markdown(report: PathReport) -> str:
    m = report.metrics
    lines = [
        "## groundtrace paths: command-path validation",
        "",
        _run_line(report),
        "",
        *[line for text in _applicability(report) for line in (text, "")],
        reading(report),
        "",
        "| metric | value [CI] (num/den) |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in _metric_rows(report)],
        "",
        "| | path pass | path fail |",
        "|---|---|---|",
    ]
    q = m.quadrants
    for text in ("correct", "incorrect"):
        cells = [q[f"text_{text}|path_{p}"] for p in ("pass", "fail")]
        lines.append(f"| text {text} | " + " | ".join(f"{int(c.numerator)}" for c in cells) + " |")
    lines += ["", "| status | cases |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in sorted(m.status_counts.items())]
    by_id = {v.case_id: v for v in report.verdicts}
    if m.masked_failures:
        lines += ["", "### Masked failures (text correct, path failed)", ""]
        for case_id in m.masked_failures:
            v = by_id[case_id]
            issue = literal(_first_issue(v))
            lines.append(f"- **{literal(case_id)}** `{v.status.value}`: {issue}")
    failed = [v for v in report.verdicts if v.path_pass is False]
    if failed:
        lines += ["", "<details><summary>Every path failure</summary>", ""]
        for v in failed[:500]:
            lines.append(f"- **{literal(v.case_id)}** `{v.status.value}`")
            lines += [f"  - {i['status']}: {literal(str(i['message']))}" for i in v.issues]
        lines += ["", "</details>"]
    notes = _notes(report)
    if notes:
        lines += ["", "### Notes", *[f"- {literal(n)}" for n in notes]]
    return "\n".join(lines) + "\n"


def _svg(report: PathReport) -> str:
    q = report.metrics.quadrants
    total = sum(int(v.numerator) for v in q.values())
    size, left, top = 160, 110, 40
    colours = {
        "text_correct|path_pass": "#2e8b57",
        "text_correct|path_fail": "#d35400",
        "text_incorrect|path_pass": "#7f8c8d",
        "text_incorrect|path_fail": "#c0392b",
    }
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + 2 * size + 10}" '
        f'height="{top + 2 * size + 10}" role="img" aria-label="path quadrants" '
        'font-family="system-ui,sans-serif">',
        f'<text x="{left + size / 2}" y="{top - 12}" text-anchor="middle">path pass</text>',
        f'<text x="{left + 1.5 * size}" y="{top - 12}" text-anchor="middle">path fail</text>',
        f'<text x="{left - 10}" y="{top + size / 2}" text-anchor="end">text correct</text>',
        f'<text x="{left - 10}" y="{top + 1.5 * size}" text-anchor="end">text wrong</text>',
    ]
    for key in _QUADRANT_ORDER:
        row = 0 if key.startswith("text_correct") else 1
        col = 0 if key.endswith("path_pass") else 1
        count = int(q[key].numerator)
        share = count / total if total else 0.0
        x, y = left + col * size, top + row * size
        cx, cy = x + size / 2 - 2, y + size / 2
        parts.append(
            f'<rect x="{x}" y="{y}" width="{size - 4}" height="{size - 4}" '
            f'fill="{colours[key]}" fill-opacity="{0.15 + 0.85 * share:.3f}" stroke="#333"/>'
            f'<text x="{cx}" y="{cy}" text-anchor="middle" font-size="28">{count}</text>'
        )
        if key == "text_correct|path_fail":
            parts.append(
                f'<text x="{cx}" y="{cy + 26}" text-anchor="middle" font-size="13">'
                "masked failures</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _metric_rows(report: PathReport) -> list[tuple[str, str]]:
    m = report.metrics
    return [
        ("path pass rate", _fmt(m.path_pass_rate)),
        ("citation precision", _fmt(m.citation_precision)),
        ("citation recall", _fmt(m.citation_recall)),
        ("text score (all strict cases)", _fmt(m.text_score)),
        ("conditional text score (path pass)", _fmt(m.conditional_text_score)),
    ]


def _html(report: PathReport) -> str:
    m = report.metrics
    by_id = {v.case_id: v for v in report.verdicts}
    masked = [(c, by_id[c].status.value, _first_issue(by_id[c])) for c in m.masked_failures]
    cases = [(v.case_id, v.status.value, v.text_f1, _evidence(v)) for v in report.verdicts]
    notes = _notes(report)
    return h.page(
        "groundtrace paths: command-path validation",
        h.paragraphs([_run_line(report)], cls="muted"),
        h.paragraphs([t.replace("**", "") for t in _applicability(report)]),
        h.reading(reading(report)),
        h.section("Text correct × path pass", h.Html(_svg(report))),
        h.section("Metrics", h.table(("metric", "value [CI] (num/den)"), _metric_rows(report))),
        h.section("Statuses", h.table(("status", "cases"), sorted(m.status_counts.items()))),
        h.section(
            "Masked failures (text correct, path failed)",
            h.table(("case", "status", "first issue"), masked) if masked else "none",
        ),
        h.section("Notes", h.bullets(notes)) if notes else "",
        h.section("Cases", h.table(("case", "status", "text F1", "evidence"), cases)),
    )


def write_report(result: PathsResult | PathReport, out_dir: Path) -> Path:
    """Write ``report.json``, ``summary.md`` and ``report.html`` into ``out_dir``.

    Args:
        result: a run (:func:`~groundtrace.analyzer.paths.run`) or its report
            (:func:`~groundtrace.analyzer.paths.validate_traces`).
        out_dir: the report folder (created if absent).

    Returns:
        The path of ``report.json``.
    """
    report = result if isinstance(result, PathReport) else result.report
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown = _markdown(report)
    (out_dir / "summary.md").write_text(markdown, encoding="utf-8")
    (out_dir / "report.html").write_text(_html(report), encoding="utf-8")
    path = out_dir / "report.json"
    write(path, report)
    return path
