"""Gate reports: JSON + snapshots, a Markdown summary for a PR comment, HTML, JUnit XML."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from groundtrace.analyzer._markdown import literal
from groundtrace.analyzer._results import write

from ._bayes import Decision
from ._changes import CaseChange, ChangeKind, FailureChanges
from ._report_html import render_html
from ._run import GateReport, GateResult

__all__ = ["write_report"]

_BADGE = {
    Decision.PROMOTE: "✅ promote",
    Decision.MANUAL_REVIEW: "🟡 manual review",
    Decision.BLOCK: "⛔ block",
    Decision.NOT_EVALUABLE: "❔ not evaluable",
}

#: Cases listed per section of the Markdown summary (all of them are in report.json).
_LISTED = 200


def _markdown(report: GateReport) -> str:
    snaps = report.snapshots
    lines = [
        f"## groundtrace gate: {_BADGE[report.decision]}",
        "",
        f"Profile {literal(snaps.profile_name)} v{literal(snaps.profile_version)} · "
        f"dataset `{snaps.dataset_sha256[:12]}` · profile `{snaps.profile_sha256[:12]}` · "
        f"code {snaps.code_version}",
        "",
        "| layer | decision | detail |",
        "|---|---|---|",
        f"| cases | {report.case_level.decision.value} | "
        + ", ".join(f"{k}: {v}" for k, v in report.case_level.counts.items() if v)
        + " |",
        f"| checks | – | {_check_counts(report)} |",
    ]
    if report.statistics is not None:
        s = report.statistics
        lines.append(
            f"| statistics | {s.decision.value} | pooled ρ = {s.rho:.3f} → "
            f"{s.pooled_decision.value} (δ = {s.delta}, τ_b = {s.tau_block}, "
            f"τ_r = {s.tau_review}, S = {s.samples}, seed {s.seed}); each stratum by its own "
            "thresholds below |"
        )
        lines += [
            "",
            "| stratum | baseline k/n | candidate k/n | weight | ρ_c | δ_c | τ_b | τ_r "
            "| decision |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for st in s.strata:
            rho_c = "–" if st.rho is None else f"{st.rho:.3f}"
            dec = "–" if st.decision is None else st.decision.value
            lines.append(
                f"| {literal(st.stratum, table=True)} | {st.baseline.k}/{st.baseline.n} | "
                f"{st.candidate.k}/{st.candidate.n} | {st.weight:.2f} | {rho_c} | "
                f"{_threshold(st.delta)} | {_threshold(st.tau_block)} | "
                f"{_threshold(st.tau_review)} | {dec} |"
            )
    else:
        note = literal(report.statistics_note, table=True)
        lines.append(f"| statistics | not evaluable | {note} |")
    reasons = list(report.case_level.reasons)
    if report.statistics_note:
        reasons.append(report.statistics_note)
    if reasons:
        lines += ["", "### Reasons", *[f"- {literal(r)}" for r in reasons]]
    lines += _changes_markdown(report)
    if report.notes:
        lines += ["", "### Notes", *[f"- {literal(n)}" for n in report.notes]]
    return "\n".join(lines) + "\n"


def _check_counts(report: GateReport) -> str:
    """Per check layer, the candidate's results by status (which layers ran, and how)."""
    counts: dict[str, dict[str, int]] = {}
    for case in report.cases:
        for result in case.results:
            layer = counts.setdefault(result.layer, {})
            layer[result.status.value] = layer.get(result.status.value, 0) + 1
    return (
        "; ".join(
            f"{layer}: " + ", ".join(f"{n} {status}" for status, n in sorted(by.items()))
            for layer, by in counts.items()
        )
        or "no check ran"
    )


def _threshold(value: float | None) -> str:
    """A stratum's threshold; "–" when the profile gives the stratum none (no ρ_c)."""
    return "–" if value is None else f"{value:g}"


def _changes_markdown(report: GateReport) -> list[str]:
    """New failures (open), failures the baseline had and fixed cases (folded), with reasons."""
    changes = report.changes
    if changes is None:  # a report of format 1.1: only the candidate's failures are known
        changes = FailureChanges(
            new=tuple(
                CaseChange(c.case_id, c.stratum, ChangeKind.NEW, None, c.decision)
                for c in report.cases
                if not c.passed
            )
        )
    reasons = {c.case_id: c.reasons for c in report.cases}
    lines: list[str] = []
    for title, items, fold in (
        ("New failures (passed in the baseline)", changes.new, False),
        ("Failing in the baseline too", changes.known, True),
        ("Fixed (failed in the baseline)", changes.fixed, True),
    ):
        if not items:
            continue
        head = f"{title}: {len(items)}"
        lines += ["", f"<details><summary>{head}</summary>" if fold else f"### {head}", ""]
        for c in items[:_LISTED]:
            if c.kind is ChangeKind.FIXED:
                why = f"was {_was(c)}: " + literal("; ".join(c.baseline_reasons))
            else:
                why = f"{c.candidate.value}" + (
                    f" (was {_was(c)})" if c.baseline is not Decision.PROMOTE else ""
                )
                why += ": " + literal("; ".join(reasons.get(c.case_id, ())))
            lines.append(f"- **{literal(c.case_id)}** ({literal(c.stratum)}) {why}")
        if len(items) > _LISTED:
            lines.append(f"- … {len(items) - _LISTED} more in report.json")
        if fold:
            lines += ["", "</details>"]
    return lines


def _was(change: CaseChange) -> str:
    return "no decision" if change.baseline is None else change.baseline.value


def _junit(report: GateReport) -> bytes:
    """One testcase per case; a failure names whether it is new or the baseline had it."""
    changes = {} if report.changes is None else report.changes.by_case()
    failures = sum(not c.passed for c in report.cases)
    suite = ET.Element(
        "testsuite",
        name="groundtrace-gate",
        tests=str(len(report.cases)),
        failures=str(failures),
        errors="0",
    )
    for c in report.cases:
        case = ET.SubElement(suite, "testcase", classname=f"gate.{c.stratum}", name=c.case_id)
        change = changes.get(c.case_id)
        if change is not None:
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="change", value=change.kind.value)
            ET.SubElement(props, "property", name="baseline_decision", value=_was(change))
        if c.passed:
            if change is not None:  # fixed
                out = ET.SubElement(case, "system-out")
                out.text = f"fixed: baseline was {_was(change)}\n" + "\n".join(
                    change.baseline_reasons
                )
            continue
        prefix = (
            "known failure (the baseline failed too)"
            if change and change.kind is ChangeKind.KNOWN
            else "new failure"
        )
        failure = ET.SubElement(
            case, "failure", type=c.decision.value, message=f"{prefix}: {c.decision.value}"
        )
        failure.text = "\n".join(c.reasons)
    data: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return data


def write_report(run: GateResult, out_dir: Path, junit: Path | None = None) -> Path:
    """Write report.json, summary.md, report.html and the snapshots; return report.json.

    The JUnit XML is written to ``junit``, by default the run's (its config's ``junit``).
    """
    report = run.report
    junit = run.junit if junit is None else junit
    snapshots = out_dir / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    (snapshots / f"dataset-{report.snapshots.dataset_sha256}.json").write_text(
        run.dataset_json, encoding="utf-8"
    )
    (snapshots / f"profile-{report.snapshots.profile_sha256}.toml").write_bytes(
        run.profile.raw_text.encode("utf-8")
    )
    markdown = _markdown(report)
    (out_dir / "summary.md").write_text(markdown, encoding="utf-8")
    (out_dir / "report.html").write_text(render_html(report), encoding="utf-8")
    path = out_dir / "report.json"
    write(path, report)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_bytes(_junit(report))
    return path
