"""The audit's one-paragraph plain-language reading, generated from the run's numbers."""

from __future__ import annotations

from groundtrace.analyzer._wording import pct

from ._records import AuditResult

__all__ = ["reading"]


def reading(run: AuditResult) -> str:
    """What the multi-source audit found across the sources."""
    s = run.summary
    parts = [
        f"The audit answered {len(run.questions)} question(s) from {len(run.sources)} "
        f"source(s) ({s.n_answers} answers) and labelled {s.n_pairs} source pair(s)."
    ]
    absent = sum(f.n_absent for f in s.absence_by_source)
    if s.n_answers:
        parts.append(
            f"{absent} answer(s) ({pct(absent / s.n_answers)}) found nothing in their source."
        )
    o = s.overall
    if o.prevalence is None:
        parts.append("No pair had both sources answering, so disagreement is not measured.")
    else:
        parts.append(
            f"Where both sources answer ({o.n_present} pairs), {o.n_disagree} disagree "
            f"(prevalence {pct(o.prevalence)})."
        )
        measured = [f for f in s.by_question if f.prevalence is not None and f.n_disagree]
        if measured:
            top = max(measured, key=lambda f: (f.prevalence or 0.0, f.n_disagree))
            parts.append(
                f"Question {top.key} is the most contested ({top.n_disagree} of {top.n_present}"
                " pairs disagree)."
            )
    if s.prefilter_share is not None:
        parts.append(f"Pre-filters decided {pct(s.prefilter_share)} of the pairs.")
    from ._report import review_only  # the report imports this module

    if review_only(run):
        parts.insert(
            0,
            "Review-only: the labeller's validation against the gold pair labels did not pass, "
            "so the labels and disagreement figures below are for review, not for a decision.",
        )
    return " ".join(parts)
