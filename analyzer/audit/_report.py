"""Markdown and self-contained HTML reports of an audit run, a comparison and a validation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any, TypeVar

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._agreement import Statistic
from groundtrace.analyzer._markdown import literal
from groundtrace.analyzer._results import write
from groundtrace.analyzer.errors import InputError

from ._compare import AuditComparison, Delta
from ._model import LABELS, PairLabel
from ._reading import reading
from ._records import AuditResult
from ._summary import AbsenceFigure, PrevalenceFigure, pair_id
from ._validate import AuditValidation

__all__ = [
    "HEATMAP_SOURCES",
    "INTERVALS",
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "render_validation_markdown",
    "review_only",
    "write_report",
]

_F = TypeVar("_F", PrevalenceFigure, AbsenceFigure)


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


def _headline(run: AuditResult) -> list[tuple[str, str]]:
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
        ("disagreement prevalence (95% CI)" + (" [review-only]" if review_only(run) else ""),
         f"{_ci(s.overall.prevalence, s.overall.ci_low, s.overall.ci_high)} "
         f"of {s.overall.n_present} present pairs"),
        ("labeller validation", _verdict(run)),
        ("intervals", INTERVALS.format(n=s.n_resamples, seed=s.seed)),
        ("wall time", f"{run.wall_seconds:.1f} s"),
    ]  # fmt: skip


#: What every interval of a run covers (and what it does not).
INTERVALS = (
    "95% cluster bootstrap over questions, {n} resamples, seed {seed}: it covers the sampling "
    "of questions (another set of questions like these), not answerer or labeller error"
)


def review_only(run: AuditResult) -> bool:
    """Whether the run's labels failed their validation against gold (the headline figures
    built on them are for review only)."""
    return run.validation is not None and not run.validation.validated


def _verdict(run: AuditResult) -> str:
    v = run.validation
    if v is None:
        return "not validated (no gold pair labels)"
    if v.validated:
        return f"{v.labeller}: validated (five-label kappa {_stat(v.kappa)})"
    return f"{v.labeller}: REVIEW-ONLY, validation did not pass: " + "; ".join(v.reasons)


def _figure_rows(figures: Sequence[PrevalenceFigure]) -> list[str]:
    return [
        f"| {literal(f.key, table=True)} | {f.n_pairs} | {f.n_present} | {f.n_disagree} | "
        f"{_ci(f.prevalence, f.ci_low, f.ci_high)} |"
        for f in figures
    ]


#: Rows a long Markdown table shows (the most contested first; run.json holds every row).
MD_MAX_ROWS = 50


def _most(figures: Sequence[_F], key: Callable[[_F], Any], limit: int) -> list[_F]:
    """``figures`` in their order, or the first ``limit`` by ``key`` when there are more."""
    return list(figures) if len(figures) <= limit else sorted(figures, key=key)[:limit]


def _md_left_out(count: int, what: str, field: str) -> list[str]:
    if count <= 0:
        return []
    return ["", f"{count} more {what} not shown: run.json holds every one (summary.{field})."]


def render_markdown(run: AuditResult) -> str:
    """The run's headline, absence, prevalence, significance and validation as Markdown."""
    s = run.summary
    lines = ["# Multi-source audit", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _headline(run)]
    flag = " (review-only: the labeller's validation did not pass)" if review_only(run) else ""
    lines += ["", f"## Labels{flag}", "", "| label | pairs |", "|---|---|"]
    lines += [f"| {label} | {s.labels[label]} |" for label in LABELS]
    lines += ["", "Decided by: " + ", ".join(f"{k} {v}" for k, v in s.decided_by.items())]
    lines += ["", "Significance: " + (", ".join(f"{k} {v}" for k, v in s.significance.items())
                                       or "none")]  # fmt: skip
    for title, field, figures in (
        ("question", "by_question", s.by_question), ("topic", "by_topic", s.by_topic),
        ("group pair", "by_group", s.by_group), ("source", "by_source", s.by_source),
    ):  # fmt: skip
        lines += ["", f"## Disagreement prevalence by {title}", ""]
        lines += [f"| {title} | pairs | both present | disagreeing | prevalence [95% CI] |"]
        shown = _most(figures, lambda f: (-f.n_disagree, f.key), MD_MAX_ROWS)
        lines += ["|---|---|---|---|---|", *_figure_rows(shown)]
        lines += _md_left_out(len(figures) - len(shown), f"{title} rows", field)
    lines += ["", "## Absence by source", "", "| source | answers | absent | rate [95% CI] |"]
    lines += ["|---|---|---|---|"]
    absent = _most(s.absence_by_source, lambda f: (-f.rate, f.key), MD_MAX_ROWS)
    lines += [f"| {literal(f.key, table=True)} | {f.n_answers} | {f.n_absent} | "
              f"{_ci(f.rate, f.ci_low, f.ci_high)} |"
              for f in absent]  # fmt: skip
    lines += _md_left_out(len(s.absence_by_source) - len(absent), "sources", "absence_by_source")
    lines += ["", "Intervals resample whole questions (the pairs of a question share its "
              "answers, so they are not independent): they cover the sampling of questions, "
              "not answerer or labeller error; a one-question slice has none."]  # fmt: skip
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
        f"| {literal(q.question_id, table=True)} | {_pct(q.absence_a)} | {_pct(q.absence_b)} | "
        f"{_pct(q.prevalence_a)} | {_pct(q.prevalence_b)} |"
        for q in c.questions
    ]
    lines += ["", "## Flipped pairs", "", "| question | pair | A | B |", "|---|---|---|---|"]
    lines += [f"| {literal(f.question_id, table=True)} | {literal(f.source_a, table=True)} / "
              f"{literal(f.source_b, table=True)} | {f.label_a} | {f.label_b} |"
              for f in c.flipped]  # fmt: skip
    return "\n".join(lines) + "\n"


def _style(sources: int) -> str:
    """The heatmap's cells: 24 px, smaller when that many columns would not fit the page."""
    cell = max(12, min(24, (h.CONTENT_WIDTH - 140) // max(sources, 1)))
    return (
        f".hm td{{width:{cell}px;height:{cell}px;padding:0;text-align:center;font-size:11px}}"
        ".hm th{font-size:11px;padding:2px;overflow-wrap:normal;white-space:nowrap}"
        ".rot{writing-mode:vertical-rl}"
    )


#: Rows a long table of the page shows (the rows with the most disagreeing pairs first); the
#: rest are counted under it, and run.json holds every row.
MAX_ROWS = 20
#: Disagreeing pairs listed per question (with both answers); run.json holds every pair.
MAX_PAIRS = 25
_SIGNIFICANCE_ORDER = {"high": 0, "medium": 1, "low": 2}


def _links(ids: Sequence[str], listed: set[str]) -> str:
    """The pairs behind a figure: links to those the page lists, the others as plain ids."""
    if not ids:
        return ""
    linked = [i for i in ids if i in listed]
    shown = linked + [i for i in ids[: MAX_PAIRS + len(linked)] if i not in listed][:MAX_PAIRS]
    items = " ".join(
        f'<a href="#p-{escape(i)}">{escape(i)}</a>' if i in listed else escape(i) for i in shown
    )
    more = f" and {len(ids) - len(shown)} more (run.json)" if len(ids) > len(shown) else ""
    return f"<details><summary>{len(ids)} pairs</summary>{items}{more}</details>"


def _html_figures(
    title: str, field: str, figures: Sequence[PrevalenceFigure], listed: set[str]
) -> str:
    shown = list(figures)
    if len(shown) > MAX_ROWS:
        shown = sorted(shown, key=lambda f: (-f.n_disagree, f.key))[:MAX_ROWS]
    rows = "".join(
        f"<tr><td>{escape(f.key)}</td><td>{f.n_pairs}</td><td>{f.n_present}</td>"
        f"<td>{f.n_disagree}</td><td>{_ci(f.prevalence, f.ci_low, f.ci_high)}</td>"
        f"<td>{_links(f.disagreeing, listed)}</td></tr>"
        for f in shown
    )
    more = h.left_out(
        len(figures) - len(shown),
        f"{title} rows (fewer disagreeing pairs)",
        f"run.json holds every one (summary.{field})",
    )
    return (
        f"<h2>Disagreement prevalence by {title}</h2><table><tr><th>{title}</th><th>pairs</th>"
        "<th>both present</th><th>disagreeing</th><th>prevalence [95% CI]</th>"
        "<th>pairs behind it</th>"
        f"</tr>{rows}</table>{more}"
    )


def _absence(run: AuditResult) -> str:
    figures = list(run.summary.absence_by_source)
    shown = figures
    if len(figures) > MAX_ROWS:
        shown = sorted(figures, key=lambda f: (-(f.rate or 0.0), f.key))[:MAX_ROWS]
    rows = "".join(
        f"<tr><td>{escape(f.key)}</td><td>{f.n_answers}</td><td>{f.n_absent}</td>"
        f"<td>{_ci(f.rate, f.ci_low, f.ci_high)}</td></tr>"
        for f in shown
    )
    more = h.left_out(
        len(figures) - len(shown),
        "sources (lower absence rates)",
        "run.json holds every one (summary.absence_by_source)",
    )
    return (
        "<h2>Absence by source</h2><table><tr><th>source</th><th>answers</th><th>absent</th>"
        f"<th>rate [95% CI]</th></tr>{rows}</table>{more}"
    )


#: Sources the heat map shows: the most contested (most disagreeing pairs), so its size does
#: not grow with the square of the corpus; run.json holds every cell (summary.heatmap).
HEATMAP_SOURCES = 40


def _contested(run: AuditResult) -> list[str]:
    """The ids of the heat map's sources: all of them, or the most contested in corpus order."""
    ids = [s.id for s in run.sources]
    if len(ids) <= HEATMAP_SOURCES:
        return ids
    disagree = {f.key: f.n_disagree for f in run.summary.by_source}
    top = set(sorted(ids, key=lambda i: (-disagree.get(i, 0), i))[:HEATMAP_SOURCES])
    return [i for i in ids if i in top]


def _heatmap(run: AuditResult) -> str:
    ids = _contested(run)
    wanted = set(ids)
    cells = {
        (c.source_a, c.source_b): c
        for c in run.summary.heatmap
        if c.source_a in wanted and c.source_b in wanted
    }
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
    scope = ""
    if len(ids) < len(run.sources):
        scope = (
            f" It shows the {len(ids)} most contested of the {len(run.sources)} sources (the "
            "most disagreeing pairs over all questions); run.json holds every cell "
            "(summary.heatmap)."
        )
    return (
        "<h2>Source x source disagreement</h2><p>Cell: disagreeing pairs over all questions "
        f"(colour: share of the pairs where both sources answer; hover for counts).{scope}</p>"
        f'<table class="hm"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
    )


def _validation_html(run: AuditResult) -> str:
    """The labeller's validation against gold: verdict, statistics and confusion matrix."""
    v = run.validation
    if v is None:
        return (
            "<h2>Labeller validation</h2><p>Not validated: the corpus has no gold pair labels, "
            "so the labels (and every figure built on them) are unchecked.</p>"
        )
    verdict = "validated" if v.validated else "review-only: " + "; ".join(v.reasons)
    stats = "".join(
        f"<tr><td>{name}</td><td>{escape(_stat(stat))}</td></tr>"
        for name, stat in (
            ("five-label agreement", v.agreement), ("five-label Cohen's kappa", v.kappa),
            ("disagreement kappa", v.disagreement_kappa),
            ("disagreement MCC", v.disagreement_mcc),
        )
    )  # fmt: skip
    head = "".join(f"<th>{label}</th>" for label in LABELS)
    rows = "".join(
        f"<tr><th>{g}</th>" + "".join(f"<td>{v.confusion[g][p]}</td>" for p in LABELS) + "</tr>"
        for g in LABELS
    )
    return (
        f"<h2>Labeller validation</h2><p>Labeller <code>{escape(v.labeller)}</code> against "
        f"the gold pair labels: <strong>{escape(verdict)}</strong>. Gold pairs {v.n_gold}, "
        f"labelled {v.n_labelled}, protocol errors {v.protocol_errors}; intervals resample the "
        f"{v.n_questions} questions ({v.acceptance.n_resamples} resamples, seed "
        f"{v.acceptance.seed}): they cover the sampling of questions, not labeller error.</p>"
        f"<table><tr><th>statistic</th><th>value [95% CI]</th></tr>{stats}</table>"
        "<p>Confusion (rows gold, columns predicted):</p>"
        f"<table><tr><th>gold \\ predicted</th>{head}</tr>{rows}</table>"
    )


def _listed_pairs(run: AuditResult) -> dict[str, list[PairLabel]]:
    """Per question, the disagreeing pairs the page lists (most significant first, capped)."""
    disagreeing = {i for f in run.summary.by_question for i in f.disagreeing}
    by_question: dict[str, list[PairLabel]] = {}
    for pair in run.pairs:
        if pair_id(pair) in disagreeing:
            by_question.setdefault(pair.question_id, []).append(pair)
    return {
        q: sorted(pairs, key=lambda p: _SIGNIFICANCE_ORDER.get(p.significance or "", 3))
        for q, pairs in by_question.items()
    }


def _pair_details(run: AuditResult, listed: dict[str, list[PairLabel]]) -> str:
    """One collapsed group per question: its disagreeing pairs with both answers."""
    answers = {(a.question_id, a.source_id): a for a in run.answers}
    present = {f.key: f.n_present for f in run.summary.by_question}
    groups = []
    for question, pairs in listed.items():
        rows = []
        for pair in pairs[:MAX_PAIRS]:
            a = answers[(pair.question_id, pair.source_a)]
            b = answers[(pair.question_id, pair.source_b)]
            pid = pair_id(pair)
            rows.append(
                f'<tr id="p-{escape(pid)}"><td>{h.ident(pid)}</td><td>{pair.label}</td>'
                f"<td>{pair.significance or ''}</td><td>{escape(pair.decided_by)}</td>"
                f"<td>{escape(a.text)}<br>{_quote(a.quote)}</td>"
                f"<td>{escape(b.text)}<br>{_quote(b.quote)}</td></tr>"
            )
        more = h.left_out(
            len(pairs) - MAX_PAIRS, "disagreeing pairs of this question",
            "run.json holds every pair (pairs) and answer (answers)",
        )  # fmt: skip
        table = (
            "<table><tr><th>pair</th><th>label</th><th>significance</th><th>decided by</th>"
            f"<th>answer A</th><th>answer B</th></tr>{''.join(rows)}</table>{more}"
        )
        summary = (
            f"{question}: {len(pairs)} disagreeing of {present.get(question, 0)} pairs "
            "where both sources answer"
        )
        groups.append(h.details(summary, h.Html(table)))
    agreeing: dict[str, int] = {}
    shown = {pair_id(p) for pairs in listed.values() for p in pairs}
    for pair in run.pairs:
        if pair.label != "absent" and pair_id(pair) not in shown:
            agreeing[pair.label] = agreeing.get(pair.label, 0) + 1
    rest = ", ".join(f"{n} {label}" for label, n in agreeing.items()) or "none"
    return (
        "<h2>Disagreeing pairs, by question</h2><p>Open a question for its disagreeing pairs "
        "with both answers and the quoted source text. The other pairs where both sources "
        f"answer ({rest}) are not listed: run.json holds every pair (pairs) and answer "
        f"(answers).</p>{''.join(groups) or '<p>No pair disagrees.</p>'}"
    )


def _review_note(run: AuditResult) -> str:
    if not review_only(run):
        return ""
    return (
        "<p><strong>Review-only:</strong> the labeller's validation against the gold pair "
        "labels did not pass (see Labeller validation), so the labels and the disagreement "
        "figures below are for review, not for a decision.</p>"
    )


def render_html(run: AuditResult) -> str:
    """A self-contained HTML page of the run (no external assets).

    Long tables show their first :data:`MAX_ROWS` rows (the most contested) and count the
    rest; the disagreeing pairs are grouped per question in collapsed ``<details>``; run.json
    holds everything the page leaves out (the notes say where).
    """
    s = run.summary
    head = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in _headline(run))
    sig = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in s.significance.items())
    listed = _listed_pairs(run)
    ids = {pair_id(p) for pairs in listed.values() for p in pairs[:MAX_PAIRS]}
    parts = [
        h.reading(reading(run)),
        f"<table>{head}</table>",
        _review_note(run),
        _validation_html(run),
        _html_figures("question", "by_question", s.by_question, ids),
        _html_figures("topic", "by_topic", s.by_topic, ids),
        _html_figures("group pair", "by_group", s.by_group, ids),
        _html_figures("source", "by_source", s.by_source, ids),
        "<h2>Significance of differences</h2><table><tr><th>significance</th><th>pairs</th></tr>",
        f"{sig}</table>",
        _absence(run),
        _heatmap(run),
        _pair_details(run, listed),
    ]
    style = _style(len(_contested(run)))
    return h.page("Multi-source audit", *map(h.Html, parts), style=style)


def write_report(result: AuditResult, out: str | Path) -> Path:
    """Write ``run.json`` (the record), ``report.md`` and ``report.html`` into ``out``.

    Returns:
        The main report, ``out/report.html``.

    Raises:
        InputError: a file cannot be written.
    """
    folder = Path(out)
    write(folder / "run.json", result)
    html = folder / "report.html"
    try:
        (folder / "report.md").write_text(render_markdown(result), "utf-8")
        html.write_text(render_html(result), "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", path=str(folder)) from None
    return html
