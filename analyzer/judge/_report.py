"""Markdown rendering of a judge validation."""

from __future__ import annotations

from groundtrace.analyzer._agreement import Statistic

from ._reading import judge_reading
from ._record import ValidationRecord
from ._records import JudgeValidation

__all__ = ["render_validation_markdown"]


def _fmt(stat: Statistic | None) -> str:
    if stat is None:
        return "not measured"
    if stat.value is None:
        return f"undefined ({stat.undefined_reason})"
    low, high = stat.ci_low, stat.ci_high
    interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"{stat.value:.3f}{interval}"


def render_validation_markdown(
    validation: JudgeValidation,
    record: ValidationRecord,
    *,
    command: str | None = None,
) -> str:
    """A PR-comment-sized Markdown report of one validation and its verdict."""
    gold = validation.gold
    grade = validation.grade
    errors = validation.protocol_errors
    boot = validation.bootstrap
    fp = record.fingerprint
    lines = [
        f"# Judge validation: `{validation.dimension}`",
        "",
        f"**Verdict: {record.mode.replace('_', '-')}**"
        + (" (all acceptance criteria met)" if record.mode == "gate_eligible" else ""),
        "",
        judge_reading(validation),
        "",
        f"- judge: `{fp['endpoint']}` model `{fp['model']}` rubric `{fp['rubric_version']}`",
        f"- fingerprint: `{fp['digest'][:16]}`",
        f"- gold set: `{gold.path}` ({gold.layout}, label `{gold.label_field}`)",
    ]
    if gold.filters:
        lines.append(f"- filters: {', '.join(f'`{f}`' for f in gold.filters)}")
    if gold.sample:
        lines.append(f"- sample: {gold.sample}")
    lines += [
        f"- items: {validation.n_items} ({gold.n_pass} pass / {gold.n_fail} fail);"
        f" scored: {validation.n}; protocol errors: {errors.count}"
        + (f" {errors.by_kind}" if errors.count else ""),
        f"- grade: **{grade.value}** (size alone: {grade.size_grade},"
        f" minority share {grade.minority_share:.1%})",
    ]
    lines += [f"  - {r}" for r in grade.reasons]
    lines += [
        f"- working threshold: {validation.threshold}; bootstrap: B = {boot.n_resamples},"
        f" seed {boot.seed}, 95% percentile intervals",
        "",
        "| statistic | value [95% CI] |",
        "|---|---|",
        f"| raw agreement (judge vs gold) | {_fmt(validation.raw_agreement)} |",
        f"| Cohen's κ (judge vs gold) | {_fmt(validation.kappa)} |",
        f"| MCC @ {validation.threshold} | {_fmt(validation.mcc)} |",
        f"| AUROC | {_fmt(validation.auroc)} |",
    ]
    ia = validation.inter_annotator
    if ia.available:
        lines += [
            f"| raw agreement (A vs B) | {_fmt(ia.raw_agreement)} |",
            f"| Cohen's κ (A vs B) | {_fmt(ia.kappa)} |",
        ]
    else:
        lines.append(f"| inter-annotator κ | not available: {ia.reason} |")
    lines += ["", "MCC threshold sweep:", "", "| threshold | MCC [95% CI] |", "|---|---|"]
    lines += [f"| {row.threshold} | {_fmt(row.mcc)} |" for row in validation.sweep]
    lines += ["", "Acceptance criteria (profile `" + record.profile.name + "`):", ""]
    lines += ["| criterion | required | observed | met |", "|---|---|---|---|"]
    for c in record.criteria:
        observed = c.observed
        shown = f"{observed:.3f}" if isinstance(observed, float) else str(observed)
        lines.append(f"| {c.name} | {c.required} | {shown} | {'yes' if c.passed else 'no'} |")
    if command:
        lines += ["", f"Command: `{command}`"]
    return "\n".join(lines) + "\n"
