"""The plain-language reading of a judge result, generated from its numbers.

A validation reads as how far the judge can be trusted on its dimension (Cohen's κ against
gold and whether its 95% interval excludes 0, raw agreement, the gold set's grade, the
verdict); a run without a gold set reads as what the judge scored (per metric: cases scored,
mean, pass/fail at the working threshold) and what it could not score (protocol errors, traces
not judgeable, unreadable lines).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._records import JudgeRunSummary, JudgeValidation
    from ._shape import JudgeReport

__all__ = ["judge_reading", "reading", "run_reading"]


def _num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` decimals; a non-zero value that would round to 0 keeps 2 digits."""
    shown = f"{x:.2g}" if 0 < abs(x) < 10**-digits else f"{x:.{digits}f}"
    return shown.replace("-", "−")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _excludes_zero(low: float | None, high: float | None) -> bool | None:
    if low is None or high is None:
        return None
    return low > 0 or high < 0


def _interval(low: float | None, high: float | None) -> str:
    """ "95% CI a to b, which excludes 0" (or includes 0, or no interval)."""
    side = _excludes_zero(low, high)
    if side is None or low is None or high is None:
        return "no interval could be computed"
    return f"95% CI {_num(low)} to {_num(high)}, which {'excludes' if side else 'includes'} 0"


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
        beyond = _excludes_zero(kappa.ci_low, kappa.ci_high)
        meaning = (
            "agreement beyond chance" if beyond and kappa.value > 0
            else "worse than chance" if beyond
            else "agreement that cannot be told from chance"
        )  # fmt: skip
        parts.append(
            f"Cohen's κ against gold is {_num(kappa.value)} "
            f"({_interval(kappa.ci_low, kappa.ci_high)}): {meaning}."
        )
    raw = validation.raw_agreement
    if raw.value is not None:
        parts.append(f"Raw agreement is {_pct(raw.value)}.")
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
                    f"{words} on {m.scored} (mean {_num(m.mean)}, {m.passed} pass / "
                    f"{m.failed} fail)"
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
    if unreadable:
        parts.append(f"{unreadable} unreadable trace line(s) were skipped.")
    return " ".join(parts)


def reading(report: JudgeReport) -> str:
    """The reading of a judge result: its validation when it has one, else its run."""
    if report.validation is not None:
        return judge_reading(report.validation)
    return run_reading(report.summary)
