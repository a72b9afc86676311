"""Markdown and self-contained HTML reports of an audit run, a comparison and a validation."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._readings import audit_reading
from groundtrace.analyzer._results import write
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.judge import Statistic

from ._compare import AuditComparison, Delta
from ._model import LABELS
from ._records import AuditRun
from ._summary import PrevalenceFigure, pair_id
from ._validate import AuditValidation

__all__ = [
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "render_validation_markdown",
    "write_reports",
]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _quote(text: str) -> str:
    """A source's own words, marked verbatim (a licence may well contain ``***`` or ``##``)."""
    return f"<small data-verbatim>{escape(text[:240])}</small>"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _stat(stat: Statistic) -> str:
    if stat.value is None:
        return f"undefined ({stat.undefined_reason})"
    return f"{stat.value:.3f} [{_num(stat.ci_low)}, {_num(stat.ci_high)}]"


def _ci(value: float | None, low: float | None, high: float | None) -> str:
    """A share with its interval, e.g. ``12.5% [8.1%, 17.0%]`` (no interval: the share)."""
    if low is None or high is None:
        return _pct(value)
    return f"{_pct(value)} [{_pct(low)}, {_pct(high)}]"


def _headline(run: AuditRun) -> list[tuple[str, str]]:
    s = run.summary
    return [
        ("retrieval / answerer / labeller",
         f"{run.settings.retrieval} / {run.settings.answerer} / {run.settings.labeller}"),
        ("questions x sources answered", f"{s.n_answers} ({len(run.questions)} questions)"),
        ("pairs labelled", str(s.n_pairs)),
        ("decided by pre-filters", f"{s.n_prefiltered} ({_pct(s.prefilter_share)})"),
        ("protocol errors (pairs)", str(len(run.pair_errors))),
        ("absence rate (95% CI)",
         "n/a" if s.absence is None else _ci(s.absence.rate, s.absence.ci_low, s.absence.ci_high)),
        ("disagreement prevalence (95% CI)",
         f"{_ci(s.overall.prevalence, s.overall.ci_low, s.overall.ci_high)} "
         f"of {s.overall.n_present} present pairs"),
        ("intervals",
         f"cluster bootstrap over questions, {s.n_resamples} resamples, seed {s.seed}"),
        ("wall time", f"{run.wall_seconds:.1f} s"),
    ]  # fmt: skip


def _figure_rows(figures: Sequence[PrevalenceFigure]) -> list[str]:
    return [
        f"| {f.key} | {f.n_pairs} | {f.n_present} | {f.n_disagree} | "
        f"{_ci(f.prevalence, f.ci_low, f.ci_high)} |"
        for f in figures
    ]


def render_markdown(run: AuditRun) -> str:
    """The run's headline, absence, prevalence, significance and validation as Markdown."""
    s = run.summary
    lines = ["# Multi-source audit", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _headline(run)]
    lines += ["", "## Labels", "", "| label | pairs |", "|---|---|"]
    lines += [f"| {label} | {s.labels[label]} |" for label in LABELS]
    lines += ["", "Decided by: " + ", ".join(f"{k} {v}" for k, v in s.decided_by.items())]
    lines += ["", "Significance: " + (", ".join(f"{k} {v}" for k, v in s.significance.items())
                                       or "none")]  # fmt: skip
    for title, figures in (
        ("question", s.by_question), ("topic", s.by_topic), ("group pair", s.by_group),
        ("source", s.by_source),
    ):  # fmt: skip
        lines += ["", f"## Disagreement prevalence by {title}", ""]
        lines += [f"| {title} | pairs | both present | disagreeing | prevalence [95% CI] |"]
        lines += ["|---|---|---|---|---|", *_figure_rows(figures)]
    lines += ["", "## Absence by source", "", "| source | answers | absent | rate [95% CI] |"]
    lines += ["|---|---|---|---|"]
    lines += [f"| {f.key} | {f.n_answers} | {f.n_absent} | {_ci(f.rate, f.ci_low, f.ci_high)} |"
              for f in s.absence_by_source]  # fmt: skip
    lines += ["", "Intervals resample whole questions (the pairs of a question share its "
              "answers, so they are not independent); a one-question slice has none."]  # fmt: skip
    if run.validation is not None:
        lines += ["", render_validation_markdown(run.validation)]
    return "\n".join(lines) + "\n"


def render_validation_markdown(v: AuditValidation) -> str:
    """A validation's statistics and confusion matrix as Markdown."""
    verdict = "validated" if v.validated else "review-only: " + "; ".join(v.reasons)
    lines = [
        f"## Validation of `{v.labeller}` against the gold pair labels", "",
        f"Verdict: **{verdict}** (fingerprint `{v.fingerprint[:16]}`)", "",
        f"Gold pairs {v.n_gold}, labelled {v.n_labelled}, protocol errors {v.protocol_errors}.",
        "", "| statistic | value [95% CI] |", "|---|---|",
        f"| five-label agreement | {_stat(v.agreement)} |",
        f"| five-label Cohen's kappa | {_stat(v.kappa)} |",
        f"| disagreement kappa | {_stat(v.disagreement_kappa)} |",
        f"| disagreement MCC | {_stat(v.disagreement_mcc)} |",
        "", "Confusion (rows gold, columns predicted):", "",
        "| gold \\ predicted | " + " | ".join(LABELS) + " |",
        "|---" * (len(LABELS) + 1) + "|",
    ]  # fmt: skip
    lines += [f"| {g} | " + " | ".join(str(v.confusion[g][p]) for p in LABELS) + " |"
              for g in LABELS]  # fmt: skip
    seed = v.agreement.seed
    lines += ["", f"Bootstrap: {v.acceptance.n_resamples} resamples of the {v.n_questions} "
              "questions (clusters: a question's pairs are not independent), "
              f"seed {seed}."]  # fmt: skip
    return "\n".join(lines) + "\n"


def _delta(d: Delta) -> str:
    if d.delta is None:
        return "n/a"
    return (
        f"{_num(d.value_a)} -> {_num(d.value_b)}: {d.delta:+.3f} "
        f"[{_num(d.ci_low)}, {_num(d.ci_high)}] over {d.n_questions} questions"
    )


def render_comparison_markdown(c: AuditComparison) -> str:
    """A comparison's deltas, per-question figures and flipped pairs as Markdown."""
    lines = [
        "# Audit comparison (B - A, paired by question)", "",
        f"A: retrieval {c.run_a.retrieval}, answerer {c.run_a.answerer}, "
        f"labeller {c.run_a.labeller}",
        f"B: retrieval {c.run_b.retrieval}, answerer {c.run_b.answerer}, "
        f"labeller {c.run_b.labeller}", "",
        f"- absence rate change: {_delta(c.absence)}",
        f"- disagreement prevalence change: {_delta(c.prevalence)}",
        f"- intensity (high-significance share of disagreements): A {_pct(c.intensity_a)}, "
        f"B {_pct(c.intensity_b)}",
        f"- flipped pairs: {len(c.flipped)} of {c.n_common_pairs}", "",
        "| question | absence A | absence B | prevalence A | prevalence B |",
        "|---|---|---|---|---|",
    ]  # fmt: skip
    lines += [
        f"| {q.question_id} | {_pct(q.absence_a)} | {_pct(q.absence_b)} | "
        f"{_pct(q.prevalence_a)} | {_pct(q.prevalence_b)} |"
        for q in c.questions
    ]
    lines += ["", "## Flipped pairs", "", "| question | pair | A | B |", "|---|---|---|---|"]
    lines += [f"| {f.question_id} | {f.source_a} / {f.source_b} | {f.label_a} | {f.label_b} |"
              for f in c.flipped]  # fmt: skip
    return "\n".join(lines) + "\n"


_STYLE = (
    ".hm td{width:24px;height:24px;padding:0;text-align:center;font-size:11px}"
    ".hm th{font-size:11px;padding:2px}.rot{writing-mode:vertical-rl}"
)


def _links(ids: Sequence[str]) -> str:
    if not ids:
        return ""
    items = " ".join(f'<a href="#p-{escape(i)}">{escape(i)}</a>' for i in ids)
    return f"<details><summary>{len(ids)} pairs</summary>{items}</details>"


def _html_figures(title: str, figures: Sequence[PrevalenceFigure]) -> str:
    rows = "".join(
        f"<tr><td>{escape(f.key)}</td><td>{f.n_pairs}</td><td>{f.n_present}</td>"
        f"<td>{f.n_disagree}</td><td>{_ci(f.prevalence, f.ci_low, f.ci_high)}</td>"
        f"<td>{_links(f.disagreeing)}</td></tr>"
        for f in figures
    )
    return (
        f"<h2>Disagreement prevalence by {title}</h2><table><tr><th>{title}</th><th>pairs</th>"
        "<th>both present</th><th>disagreeing</th><th>prevalence [95% CI]</th>"
        "<th>pairs behind it</th>"
        f"</tr>{rows}</table>"
    )


def _heatmap(run: AuditRun) -> str:
    ids = [s.id for s in run.sources]
    cells = {(c.source_a, c.source_b): c for c in run.summary.heatmap}
    head = "".join(f'<th class="rot">{escape(i)}</th>' for i in ids)
    rows = []
    for a in ids:
        tds = []
        for b in ids:
            cell = cells.get((a, b)) or cells.get((b, a))
            if cell is None or cell.n_present == 0:
                tds.append('<td style="background:#fafafa"></td>')
                continue
            share = cell.n_disagree / cell.n_present
            colour = f"rgba(200,30,30,{0.08 + 0.92 * share:.2f})"
            tip = f"{a} / {b}: {cell.n_disagree} of {cell.n_present} present pairs disagree"
            tds.append(f'<td style="background:{colour}" title="{escape(tip)}">'
                       f"{cell.n_disagree or ''}</td>")  # fmt: skip
        rows.append(f"<tr><th>{escape(a)}</th>{''.join(tds)}</tr>")
    return (
        "<h2>Source x source disagreement</h2><p>Cell: disagreeing pairs over all questions "
        "(colour: share of the pairs where both sources answer; hover for counts).</p>"
        f'<table class="hm"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
    )


def _pair_table(run: AuditRun) -> str:
    answers = {(a.question_id, a.source_id): a for a in run.answers}
    rows = []
    for pair in run.pairs:
        if pair.label == "absent":
            continue
        a = answers[(pair.question_id, pair.source_a)]
        b = answers[(pair.question_id, pair.source_b)]
        pid = pair_id(pair)
        rows.append(
            f'<tr id="p-{escape(pid)}"><td>{escape(pid)}</td><td>{pair.label}</td>'
            f"<td>{pair.significance or ''}</td><td>{escape(pair.decided_by)}</td>"
            f"<td>{escape(a.text)}<br>{_quote(a.quote)}</td>"
            f"<td>{escape(b.text)}<br>{_quote(b.quote)}</td></tr>"
        )
    return (
        "<h2>Pairs (both sources answer)</h2><table><tr><th>pair</th><th>label</th>"
        "<th>significance</th><th>decided by</th><th>answer A</th><th>answer B</th></tr>"
        f"{''.join(rows)}</table>"
    )


def render_html(run: AuditRun) -> str:
    """A self-contained HTML page of the run (no external assets)."""
    s = run.summary
    head = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in _headline(run))
    absence = "".join(
        f"<tr><td>{escape(f.key)}</td><td>{f.n_answers}</td><td>{f.n_absent}</td>"
        f"<td>{_ci(f.rate, f.ci_low, f.ci_high)}</td></tr>"
        for f in s.absence_by_source
    )
    sig = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in s.significance.items())
    parts = [
        h.reading(audit_reading(run)),
        f"<table>{head}</table>",
        _html_figures("question", s.by_question),
        _html_figures("topic", s.by_topic),
        _html_figures("group pair", s.by_group),
        _html_figures("source", s.by_source),
        "<h2>Significance of differences</h2><table><tr><th>significance</th><th>pairs</th></tr>",
        f"{sig}</table>",
        "<h2>Absence by source</h2><table><tr><th>source</th><th>answers</th><th>absent</th>",
        f"<th>rate [95% CI]</th></tr>{absence}</table>",
        _heatmap(run),
        _pair_table(run),
    ]
    return h.page("Multi-source audit", *map(h.Html, parts), style=_STYLE)


def write_reports(out: str | Path, run: AuditRun) -> dict[str, Path]:
    """Write ``run.json`` (the record), ``report.md`` and ``report.html`` into ``out``.

    Raises:
        InputError: a file cannot be written.
    """
    folder = Path(out)
    paths = {"json": folder / "run.json", "markdown": folder / "report.md",
             "html": folder / "report.html"}  # fmt: skip
    write(paths["json"], run)
    try:
        paths["markdown"].write_text(render_markdown(run), "utf-8")
        paths["html"].write_text(render_html(run), "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", path=str(folder)) from None
    return paths
