"""Curation of gate cases from captured traces, and the privacy scan of case files.

PII and secrets are redacted *before* anything is stored. Curation flags duplicates (same
question after folding), weak cases (nothing to check), coverage gaps (strata without cases)
and privacy findings (what was redacted). A case file that still holds PII or secrets is a
blocking finding: the gate refuses to run on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.cases import STRATA
from groundtrace.collectors import Trace
from groundtrace.sdk.redaction import Redactor

from ._match import fold

__all__ = ["CurationFinding", "CurationReport", "curate", "scan_case_file"]


class CurationFinding(msgspec.Struct, frozen=True):
    """A curation finding; ``blocking`` ones stop the gate."""

    kind: str
    message: str
    case_id: str | None = None
    blocking: bool = False


class CurationReport(Result, frozen=True, kw_only=True):
    """``<cases>.curation.json``: what ``gate curate`` drafted and found."""

    cases: int
    findings: tuple[CurationFinding, ...]
    read_errors: tuple[str, ...] = ()


def _redact(redactor: Redactor, text: str | None, fired: set[str]) -> str | None:
    if text is None:
        return None
    masked, names = redactor(text)
    fired.update(names)
    return masked


def curate(traces: Iterable[Trace]) -> tuple[list[dict[str, Any]], list[CurationFinding]]:
    """Turn traces into draft cases (redacted) plus curation findings.

    The observed answer becomes a draft ``reference_answer`` to be reviewed by people; the
    evidence the app selected (or cited) becomes the required context, with source versions.
    """
    redactor = Redactor.default()
    cases: list[dict[str, Any]] = []
    findings: list[CurationFinding] = []
    seen: dict[str, str] = {}
    for trace in traces:
        if trace.replay is not None:
            continue
        case_id = trace.request.case_id or trace.trace_id
        fired: set[str] = set()
        question = _redact(redactor, trace.request.query, fired)
        answer = _redact(redactor, trace.answer, fired)
        used = set(trace.selected_ids or ()) | set(trace.cited_ids)
        chosen = [e for e in trace.evidence if e.id is not None and e.id in used]
        case = {
            "case_id": case_id,
            "question": question or "",
            "reference_answer": answer,
            "reference_origin": "observed answer (review before use)",
            "required_context": sorted({e.id for e in chosen if e.id}),
            "expected_sources": [
                {"source": e.source or e.title, "version": e.version}
                for e in chosen
                if (e.source or e.title) and e.version
            ],
            "stratum": "general",
            "critical": False,
            "source_trace_id": trace.trace_id,
            "app_version": trace.request.app_version,
        }
        if fired:
            findings.append(
                CurationFinding(
                    "privacy", f"redacted before storing: {', '.join(sorted(fired))}", case_id
                )
            )
        if not question:
            findings.append(CurationFinding("weak", "no query in trace: case skipped", case_id))
            continue
        if answer is None and not chosen:
            findings.append(
                CurationFinding("weak", "no answer and no used evidence: nothing to check", case_id)
            )
        key = fold(question)
        if key in seen:
            findings.append(
                CurationFinding("duplicate", f"same question as case {seen[key]}", case_id)
            )
            continue
        seen[key] = case_id
        cases.append(case)
    present = {c["stratum"] for c in cases}
    for stratum in STRATA:
        if stratum not in present:
            findings.append(
                CurationFinding("coverage_gap", f"no case in stratum {stratum!r}: label some cases")
            )
    if not cases:
        findings.append(CurationFinding("empty", "no usable case in these traces", blocking=True))
    return cases, findings


def scan_case_file(path: Path, lines: Sequence[str] | None = None) -> list[CurationFinding]:
    """Blocking privacy findings for PII or secrets left in a case file."""
    redactor = Redactor.default()
    text_lines = lines if lines is not None else path.read_text(encoding="utf-8").splitlines()
    findings: list[CurationFinding] = []
    for number, line in enumerate(text_lines, start=1):
        if not line.strip():
            continue
        _, fired = redactor(line)
        if fired:
            try:
                case_id = str(json.loads(line).get("case_id"))
            except (json.JSONDecodeError, AttributeError):
                case_id = None
            findings.append(
                CurationFinding(
                    "privacy",
                    f"{path}:{number}: unredacted {', '.join(sorted(set(fired)))} in case file",
                    case_id,
                    blocking=True,
                )
            )
    return findings
