"""The attribution reports: ``attribution.json`` (the result), ``attribution.md`` and
``attribution.html`` (for people), the reading and why nothing was measured.

Per answer the report shows the top evidence with its text, how concentrated the attribution
is and whether the answer depends on its context at all:

* **top share**: the top source's score over the sum of the positive scores (1.0: one source
  carries all the positive attribution; 0 when no source has a positive score);
* **effective sources**: ``exp(H)`` of the positive scores normalised to sum to 1 (``H`` their
  entropy in nats): 1.0 when one source carries it, ``n`` when ``n`` sources share it equally;
* **context gap**: the answer's log-probability with every source minus with none; under
  :data:`INDEPENDENT` (1 nat) the answer does not depend on its context (the model says it
  anyway), and its scores say little about the evidence.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Final

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._results import write

if TYPE_CHECKING:
    from ._shape import AttributionResult, SourceScore, TraceAttribution

__all__ = [
    "INDEPENDENT",
    "effective_sources",
    "nothing_measured",
    "reading",
    "top_share",
    "write_report",
]

#: An answer whose full-vs-empty gap is under this (nats) does not depend on its context.
INDEPENDENT: Final = 1.0


def _positive(row: TraceAttribution) -> list[float]:
    return [s.score for s in row.sources if s.score > 0]


def top(row: TraceAttribution) -> SourceScore:
    """The source with the highest score (ties: prompt order)."""
    return max(row.sources, key=lambda s: s.score)


def top_share(row: TraceAttribution) -> float:
    """The top source's share of the positive scores (0 when none is positive)."""
    positive = _positive(row)
    return max(positive) / sum(positive) if positive else 0.0


def effective_sources(row: TraceAttribution) -> float:
    """``exp`` of the entropy of the positive scores normalised to sum to 1 (0 when none)."""
    positive = _positive(row)
    if not positive:
        return 0.0
    total = sum(positive)
    return math.exp(-sum(p / total * math.log(p / total) for p in positive))


def _tier(row: TraceAttribution) -> str:
    """The row's tier, with the endpoint's form (``endpoint (prompt-logprobs)``)."""
    return row.tier if row.endpoint_form is None else f"{row.tier} ({row.endpoint_form})"


def _independent(row: TraceAttribution) -> bool:
    return row.context_gap is not None and row.context_gap < INDEPENDENT


def _shared(row: TraceAttribution) -> bool:
    """The answer depends on its context, yet no source's removal alone lowers it: several
    sources carry it (redundant evidence, which leave-one-out cannot split)."""
    return row.context_gap is not None and not _independent(row) and not _positive(row)


def _gap(row: TraceAttribution, *, unit: bool = False) -> str:
    """The context gap in nats; the behavioural tier has none (it replays, scores no text)."""
    if row.context_gap is None:
        return "–"
    return f"{row.context_gap:.2f}" + (" nats" if unit else "")


def _unit(row: TraceAttribution) -> str:
    """What a row's scores are: nats of the answer's log-probability, or (behavioural tier)
    1 when the answer changes without the source, plus CUE-R's D."""
    return "1[changed] + D" if row.context_gap is None else "nats"


#: The score column's legend, under every table of scores.
LEGEND = (
    "Scores: nats of the answer's log-probability lost without the source (in-process and "
    "endpoint tiers); behavioural tier: 1 when the answer changes without the source, plus "
    "CUE-R's D (0 to 1)."
)


def _name(row: TraceAttribution) -> str:
    return row.case_id or row.trace_id


def reading(result: AttributionResult) -> str:
    """One paragraph: how many answers, how many rest on their context, how concentrated,
    at how many passes."""
    n = len(result.rows)
    if not n:
        return "No answer was attributed."
    replayed = [r for r in result.rows if r.context_gap is None]  # behavioural: no gap
    dependent = [r for r in result.rows if r.context_gap is not None and not _independent(r)]
    concentrated = sum(top_share(r) >= 0.5 for r in dependent)
    tiers = ", ".join(sorted({r.tier for r in result.rows}))
    forms = sorted({r.endpoint_form for r in result.rows if r.endpoint_form is not None})
    passes = sum(r.passes for r in result.rows)
    shared = sum(_shared(r) for r in result.rows)
    changed = [sum(s.score >= 1.0 for s in r.sources) for r in replayed]
    return (
        f"{n} answer(s) attributed ({tiers} tier"
        + (f", {', '.join(forms)} form" if forms else "") + ")"
        + (f"; {len(dependent)} depend on their context "
           f"(full vs empty context > {INDEPENDENT:g} nat), and in {concentrated} of those one "
           "source carries at least half of the positive attribution."
           if len(replayed) < n else ".")
        + (" Replayed without each source (behavioural "
           f"tier), {sum(c > 0 for c in changed)} of {len(replayed)} answer(s) change when one "
           f"source is removed, {sum(c == 1 for c in changed)} of them for exactly one source."
           if replayed else "")
        + (f" In {shared} of them no source's removal alone lowers the answer: several carry "
           "it (exact Shapley, --method shapley, splits the credit)." if shared else "")
        + f" {passes} passes by the method ({passes / n:.1f} per answer)."
        + (f" {len(result.not_usable)} trace(s) not attributed." if result.not_usable else "")
    )  # fmt: skip


def nothing_measured(result: AttributionResult) -> str | None:
    """Why nothing was attributed (the first reasons), else None."""
    if result.rows:
        return None
    why = "; ".join(f"{t}: {r}" for t, r in list(result.not_usable.items())[:3])
    return "no trace could be attributed" + (f" ({why})" if why else "")


def _markdown(result: AttributionResult) -> str:
    lines = ["# Attribution", "", reading(result), ""]
    if result.rows:
        lines += [
            "| answer | top evidence | score | top share | effective sources | "
            "context gap (nats) | tier | method | passes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in result.rows:
            best = top(row)
            lines.append(
                f"| {_name(row)} | `{best.id}` | {best.score:+.3f} | {top_share(row):.2f} | "
                f"{effective_sources(row):.2f} | {_gap(row)} | {_tier(row)} | "
                f"{row.method} | {row.passes} |"
            )
        lines += ["", LEGEND, ""]
    independent = [r for r in result.rows if _independent(r)]
    if independent:
        lines += [f"Answers that do not depend on their context (gap < {INDEPENDENT:g} nat; "
                  "their scores say little about the evidence):", ""]  # fmt: skip
        lines += [f"- {_name(r)}: {r.answer!r} (gap {r.context_gap:.2f})" for r in independent]
        lines.append("")
    for row in result.rows:
        best = top(row)
        lines += [
            f"## {_name(row)}",
            "",
            f"Answer: {row.answer!r} ({row.method}, tier {_tier(row)}, {row.passes} passes; "
            f"context gap {_gap(row, unit=True)}"
            + (", does not depend on its context" if _independent(row) else "")
            + (", no source alone carries it" if _shared(row) else "")
            + f"; top share {top_share(row):.2f}, effective sources "
            f"{effective_sources(row):.2f})",
            "",
            f"Top evidence: `{best.id}` ({best.score:+.2f} {_unit(row)}): {best.text}",
            "",
            f"| source | score ({_unit(row)}) | text |",
            "| --- | --- | --- |",
            *(f"| `{s.id}` | {s.score:+.3f} | {s.text.replace('|', '/')} |" for s in row.sources),
            "",
        ]
    for trace_id, why in result.not_usable.items():
        lines.append(f"- not attributed: {trace_id}: {why}")
    return "\n".join(lines) + "\n"


def _html(result: AttributionResult) -> str:
    summary = h.table(
        ("answer", "top evidence", "score", "top share", "effective sources",
         "context gap (nats)", "tier", "method", "passes"),
        [(h.ident(_name(r)), h.ident(top(r).id), top(r).score, top_share(r),
          effective_sources(r), r.context_gap, _tier(r), r.method, r.passes)
         for r in result.rows],
    )  # fmt: skip
    parts: list[object] = [h.reading(reading(result))]
    if result.rows:
        parts.append(h.section("Answers", h.join(summary, h.paragraphs([LEGEND]))))
    independent = [r for r in result.rows if _independent(r)]
    if independent:
        parts.append(h.section(
            f"Answers that do not depend on their context (gap < {INDEPENDENT:g} nat)",
            h.bullets(f"{_name(r)}: {r.answer!r} (gap {r.context_gap:.2f})"
                      for r in independent),
        ))  # fmt: skip
    for row in result.rows:
        best = top(row)
        parts.append(h.details(
            f"{_name(row)}: top evidence {best.id} ({best.score:+.2f} {_unit(row)})",
            h.join(
                h.paragraphs([f"Answer: {row.answer!r} ({row.method}, tier {_tier(row)}, "
                              f"{row.passes} passes; context gap {_gap(row, unit=True)})",
                              f"Top evidence: {best.text}"]),
                h.table(("source", f"score ({_unit(row)})", "text"),
                        [(h.ident(s.id), s.score, s.text) for s in row.sources]),
            ),
        ))  # fmt: skip
    if result.not_usable:
        left = h.bullets(f"{t}: {w}" for t, w in result.not_usable.items())
        parts.append(h.section("Not attributed", left))
    return h.page("Attribution", *parts)


def write_report(result: AttributionResult, out: Path) -> Path:
    """``attribution.json`` (the result), ``attribution.md`` and ``attribution.html``; the
    markdown is the main report."""
    write(out / "attribution.json", result)
    (out / "attribution.html").write_text(_html(result), encoding="utf-8")
    path = out / "attribution.md"
    path.write_text(_markdown(result), encoding="utf-8")
    return path
