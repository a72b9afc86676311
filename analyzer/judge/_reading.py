"""The plain-language reading of a judge result, generated from its numbers.

A validation reads as how far the judge can be trusted on its dimension (Cohen's κ against
gold and whether its 95% interval excludes 0, raw agreement, the gold set's grade, the
verdict); a run without a gold set reads as what the judge scored (per metric: cases scored,
mean, pass/fail at the working threshold, what the answers were judged against) and what it
could not score (protocol errors, traces not judgeable or not applicable, unreadable lines).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from groundtrace.analyzer._wording import excludes_zero, interval, num, pct

if TYPE_CHECKING:
    from ._records import JudgeRunSummary, JudgeValidation
    from ._shape import JudgeResult

__all__ = ["judge_reading", "reading", "run_reading"]


def judge_reading(validation: JudgeValidation) -> str:
    """How far the judge can be trusted on its dimension."""
    parts = [
        f"The judge was validated on {validation.n} of {validation.n_items} gold item(s) "
        f"for {validation.dimension} ({validation.protocol_errors.count} protocol error(s), "
        "left out)."
    ]
    kappa = validation.kappa
    if kappa.value is None:
        parts.append(f"Cohen's κ is undefined here ({kappa.undefined_reason}).")
    else:
        beyond = excludes_zero(kappa.ci_low, kappa.ci_high)
        meaning = (
            "agreement beyond chance" if beyond and kappa.value > 0
            else "worse than chance" if beyond
            else "agreement that cannot be told from chance"
        )  # fmt: skip
        parts.append(
            f"Cohen's κ against gold is {num(kappa.value)} "
            f"({interval(kappa.ci_low, kappa.ci_high)}): {meaning}."
        )
    raw = validation.raw_agreement
    if raw.value is not None:
        parts.append(f"Raw agreement is {pct(raw.value)}.")
    parts.append(f"The gold set grades as {validation.grade.value}.")
    if validation.mode is not None:
        mode = validation.mode.replace("_", "-")
        parts.append(f"Verdict: {mode}.")
    return " ".join(parts)


def run_reading(summary: JudgeRunSummary) -> str:
    """What a judge run scored, and what it could not score."""
    skipped = len(summary.not_judgeable)
    unreadable = len(summary.read_errors)
    if summary.nothing_measured is not None:
        parts = [f"Nothing was measured: {summary.nothing_measured}."]
    else:
        scored = []
        for name, m in summary.metrics.items():
            words = name.replace("_", " ")
            if m.mean is None:
                scored.append(f"{words} on no case")
            else:
                scored.append(
                    f"{words} on {m.scored} (mean {num(m.mean)}, {m.passed} pass / {m.failed} fail)"
                )
        parts = [
            f"The judge scored {summary.cases} case(s) at the working threshold "
            f"{summary.threshold}: " + "; ".join(scored) + "."
        ]
        if summary.needs_review:
            kinds: Counter[str] = Counter()
            for m in summary.metrics.values():
                kinds.update(m.errors_by_kind)
            shown = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
            parts.append(
                f"{summary.needs_review} case(s) had a protocol error ({shown}) and go to "
                "manual review; those metrics are left unscored, counted neither pass nor fail."
            )
        else:
            parts.append("No judgment was a protocol error.")
        parts.append(
            "These scores are the judge's own; whether they agree with human labels is "
            "measured by validating it on a gold set."
        )
    if skipped:
        parts.append(f"{skipped} trace(s) could not be judged (no query, answer or evidence).")
    inapplicable = summary.not_applicable
    if inapplicable and summary.nothing_measured is None:
        names = ", ".join(u.name for u in inapplicable[:5])
        more = f" and {len(inapplicable) - 5} more" if len(inapplicable) > 5 else ""
        parts.append(
            f"The judge does not apply to {len(inapplicable)} trace(s) ({names}{more}): "
            "they retrieved no document and called no tool, so nothing grounds their answers."
        )
    contexts = summary.contexts
    if contexts:
        shown = ", ".join(f"{n} against {source}" for source, n in contexts.items())
        parts.append(f"The answers were judged {shown}.")
    if unreadable:
        parts.append(f"{unreadable} unreadable trace line(s) were skipped.")
    return " ".join(parts)


def reading(report: JudgeResult | JudgeValidation | JudgeRunSummary) -> str:
    """The reading of a judge result (or of the ``validation.json`` / ``summary.json`` it
    wrote): its validation when it has one, else its run."""
    from ._records import JudgeRunSummary, JudgeValidation

    if isinstance(report, JudgeValidation):
        return judge_reading(report)
    if isinstance(report, JudgeRunSummary):
        return run_reading(report)
    if report.validation is not None:
        return judge_reading(report.validation)
    return run_reading(report.summary)
