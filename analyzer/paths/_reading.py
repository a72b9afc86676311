"""The plain-language reading of a path report, generated from its numbers."""

from __future__ import annotations

from groundtrace.analyzer._wording import ci, num

from ._outcome import PathsResult
from ._run import PathReport

__all__ = ["reading"]


def reading(result: PathsResult | PathReport) -> str:
    """What the command-path validation says beyond the text answers.

    Args:
        result: a run (:func:`~groundtrace.analyzer.paths.run`) or the report it wrote
            (``report.json`` read back).
    """
    report = result if isinstance(result, PathReport) else result.report
    m = report.metrics
    total = len(report.verdicts)
    not_required = m.status_counts.get("not_required", 0)
    checked = total - report.not_applicable - not_required
    parts = [
        f"Command paths were checked on {total} case(s)."
        if checked == total
        else f"Command paths were checked on {checked} of {total} case(s)."
    ]
    if report.not_applicable:
        parts.append(
            f"{report.not_applicable} of them are not applicable (no tool calls): no tool call "
            "ran and the case declares no path, so they are neither path failures nor masked "
            "failures."
        )
    if not_required:
        parts.append(
            f"{not_required} of them are not required (require_path = false): recorded, "
            "never scored."
        )
    rate = m.path_pass_rate
    if rate.value is None:
        parts.append(f"No path pass rate could be measured ({rate.note}).")
    else:
        parts.append(
            f"The path passes in {int(rate.numerator)} of {int(rate.denominator)} "
            f"(rate {num(rate.value)}, {ci(rate.ci_low, rate.ci_high)})."
        )
    masked = len(m.masked_failures)
    if masked:
        parts.append(
            f"{masked} case(s) have a correct text answer over a failed path: a check on the "
            "text alone would have passed them (masked failures)."
        )
    elif rate.value is not None:
        parts.append("No correct text answer hides a failed path (no masked failures).")
    t, c = m.text_score, m.conditional_text_score
    if t.value is not None and c.value is not None:
        parts.append(
            f"The text score is {num(t.value)} over all strict cases and {num(c.value)} "
            "where the path passes."
        )
    unchecked = ("pass", "not_required", "not_applicable")
    failing = {k: v for k, v in m.status_counts.items() if k not in unchecked and v}
    if failing:
        top = max(failing.values())
        tied = sorted(k for k, v in failing.items() if v == top)
        if len(tied) == 1:
            parts.append(f"The most frequent failure is {tied[0]} ({top} case(s)).")
        else:
            parts.append(
                f"The {sum(failing.values())} path failure(s) spread over {len(failing)} "
                f"statuses, none more frequent than {top} case(s)."
            )
    return " ".join(parts)
