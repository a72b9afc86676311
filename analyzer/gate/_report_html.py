"""The gate's ``report.html``: decision banner, reading, layers, strata, ρ posterior, reasons.

Data-driven: the per-case table takes its columns from :class:`CaseDecision`'s fields, and
any field of :class:`GateReport` this module does not lay out itself is rendered generically
at the end, so a field added to the records appears in the page without new code here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from groundtrace.analyzer import _html as h

from ._bayes import Decision, RiskResult
from ._changes import CaseChange
from ._decision import CaseDecision
from ._reading import reading
from ._run import GateReport

__all__ = ["render_html"]

_TONE = {
    Decision.PROMOTE: "good",
    Decision.MANUAL_REVIEW: "warn",
    Decision.BLOCK: "bad",
    Decision.NOT_EVALUABLE: "neutral",
}
#: GateReport fields laid out by this module; any other field goes to "More fields".
_LAID_OUT = {
    "format_version", "decision", "exit_code", "case_level", "baseline_case_level",
    "statistics", "statistics_note", "cases", "snapshots", "notes", "changes",
}  # fmt: skip
#: Case fields not shown as columns of the case table (reasons get their own column).
_CASE_HIDDEN = {"results", "reasons"}


def _banner(report: GateReport) -> h.Html:
    label = report.decision.value.replace("_", " ").upper()
    return h.banner(f"Decision: {label} · exit code {report.exit_code}", _TONE[report.decision])


def _snapshots(report: GateReport) -> h.Html:
    s = report.snapshots
    rows = [
        ("profile", f"{s.profile_name} v{s.profile_version} ({s.profile_sha256[:12]})"),
        ("dataset", s.dataset_sha256[:12]),
        ("code", s.code_version),
    ]
    return h.table(("snapshot", "value"), rows)


def _layers(report: GateReport) -> h.Html:
    def counts(level: Any) -> str:
        return ", ".join(f"{k}: {v}" for k, v in level.counts.items() if v) or "no cases"

    rows: list[Sequence[object]] = [
        ("cases (candidate)", report.case_level.decision.value, counts(report.case_level)),
        ("cases (baseline)", report.baseline_case_level.decision.value,
         counts(report.baseline_case_level)),
    ]  # fmt: skip
    s = report.statistics
    if s is None:
        rows.append(("statistics", "not evaluable", report.statistics_note))
    else:
        low, high = s.difference_ci95
        rows.append((
            "statistics", s.decision.value,
            f"pooled ρ = {s.rho:.3f} → {s.pooled_decision.value} (δ = {s.delta}, τ_block = "
            f"{s.tau_block}, τ_review = {s.tau_review}; each stratum by its own, per stratum "
            f"below); p̄_B − p̄_A = {s.difference_mean:+.3f} [{low:+.3f}, {high:+.3f}]; "
            f"S = {s.samples}, seed {s.seed}",
        ))  # fmt: skip
    return h.section("Layers", h.table(("layer", "decision", "detail"), rows))


def _posterior(s: RiskResult) -> h.Html:
    plt = h.pyplot()
    if plt is None:
        return h.no_plot("ρ posterior")
    fig, ax = plt.subplots(figsize=h.figure_inches(2, height=3.2))
    hist = s.difference_histogram
    ax.stairs(hist.counts, hist.edges, fill=True, color="#4a78b5", alpha=0.85)
    ax.axvline(-s.delta, color="#c0392b", linestyle="--", label=f"−δ = {-s.delta}")
    ax.set_xlabel("p̄_B − p̄_A (posterior draws)")
    ax.set_ylabel("draws")
    ax.set_title(f"Regression risk ρ = P(p̄_B < p̄_A − δ) = {s.rho:.3f}")
    ax.legend()
    fig.tight_layout()
    return h.figure(fig, "posterior of the pass-rate difference")


def _statistics(report: GateReport) -> h.Html:
    s = report.statistics
    if s is None:
        return h.Html("")
    rows = [
        (st.stratum, f"{st.baseline.k}/{st.baseline.n}", f"{st.candidate.k}/{st.candidate.n}",
         st.weight, st.posterior_mean_baseline, st.posterior_mean_candidate, st.rho,
         *("–" if t is None else t for t in (st.delta, st.tau_block, st.tau_review)),
         "–" if st.decision is None else st.decision.value)
        for st in s.strata
    ]  # fmt: skip
    header = ("stratum", "baseline k/n", "candidate k/n", "weight", "posterior mean A",
              "posterior mean B", "ρ_c", "δ_c", "τ_block", "τ_review", "decision")  # fmt: skip
    return h.section("Per stratum", h.table(header, rows), _posterior(s))


def _reason_key(reason: str) -> str:
    return reason.split(":", 1)[0].strip()


def _reasons(report: GateReport) -> h.Html:
    run_level = [*report.case_level.reasons]
    if report.statistics_note:
        run_level.append(report.statistics_note)
    groups: dict[str, list[tuple[CaseDecision, str]]] = {}
    for case in report.cases:
        if case.decision is Decision.PROMOTE:
            continue
        for reason in case.reasons or ("(no reason recorded)",):
            groups.setdefault(_reason_key(reason), []).append((case, reason))
    blocks = [
        h.details(
            f"{key} — {len(items)} case(s)",
            h.table(
                ("case", "stratum", "decision", "reason"),
                [(c.case_id, c.stratum, c.decision.value, r) for c, r in items],
            ),
            open_=len(groups) == 1,
        )
        for key, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    if not run_level and not blocks:
        return h.section("Reasons", h.paragraphs(["Every case promotes; no reason to report."]))
    return h.section("Reasons", h.bullets(run_level), *blocks)


def _changes(report: GateReport) -> h.Html:
    """New failures (open), failures the baseline already had and fixed cases (folded)."""
    changes = report.changes
    if changes is None:  # a report of format 1.1 carries no baseline comparison
        return h.Html("")
    blocks = [
        h.details(
            f"{title}: {len(items)}",
            h.table(("case", "stratum", "baseline", "candidate", "baseline reasons"), _rows(items)),
            open_=open_,
        )
        for title, items, open_ in (
            ("New failures (passed in the baseline)", changes.new, True),
            ("Failing in the baseline too", changes.known, False),
            ("Fixed (failed in the baseline)", changes.fixed, False),
        )
        if items
    ]
    if not blocks:
        blocks = [h.paragraphs(["No case fails in either run."])]
    return h.section("Against the baseline", *blocks)


def _rows(items: Sequence[CaseChange]) -> list[Sequence[object]]:
    return [
        (c.case_id, c.stratum, "–" if c.baseline is None else c.baseline.value,
         c.candidate.value, "; ".join(c.baseline_reasons) or "–")
        for c in items
    ]  # fmt: skip


def _cases(report: GateReport) -> h.Html:
    names = list(dict.fromkeys(
        f.name for c in report.cases for f in msgspec.structs.fields(c)
        if f.name not in _CASE_HIDDEN
    ))  # fmt: skip
    header = [name.replace("_", " ") for name in names] + ["reasons"]
    rows = [
        [h.value(getattr(c, name, None)) for name in names] + ["; ".join(c.reasons) or "–"]
        for c in report.cases
    ]
    return h.section("Cases", h.details(f"all {len(rows)} case(s)", h.table(header, rows)))


def _more(report: GateReport) -> h.Html:
    extra = [f for f in msgspec.structs.fields(report) if f.name not in _LAID_OUT]
    notes = h.section("Notes", h.bullets(report.notes)) if report.notes else h.Html("")
    more = [h.join(h.heading(f.name), h.value(getattr(report, f.name))) for f in extra]
    return h.join(notes, h.section("More fields", *more) if more else "")


def render_html(report: GateReport) -> str:
    """The self-contained ``report.html`` of a gate run."""
    return h.page(
        f"groundtrace gate: {report.decision.value.replace('_', ' ')}",
        _banner(report),
        h.reading(reading(report)),
        _snapshots(report),
        _layers(report),
        _statistics(report),
        _changes(report),
        _reasons(report),
        _cases(report),
        _more(report),
    )
