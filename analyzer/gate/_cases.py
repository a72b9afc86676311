"""Gate cases and what a run produced for them: the inputs of the three scoring layers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl

__all__ = [
    "STRATA",
    "Case",
    "CaseOutcome",
    "CheckResult",
    "CheckStatus",
    "ExpectedSource",
    "RetrievedItem",
    "read_cases",
]

#: The strata of the SPEC; a case names one of them.
STRATA: tuple[str, ...] = ("general", "domain_specific", "critical")


class CheckStatus(StrEnum):
    """Outcome of one check, guardrail rule or judge metric on one case."""

    PASS = "pass"
    FAIL = "fail"
    #: the check could not run because the trace lacks what it needs
    MISSING = "missing"
    #: a guardrail rule ran out of time: visible, never a pass
    TIMEOUT = "timeout"
    #: a judge protocol error (SPEC 4.4)
    PROTOCOL_ERROR = "protocol_error"
    #: a warn/log guardrail or observe-mode judge hit (recorded, no effect on the decision)
    NOTED = "noted"


@dataclass(frozen=True, slots=True)
class ExpectedSource:
    """A source the answer must rest on, optionally at a given document version."""

    source: str
    version: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One gate case (SPEC 4.5): what the answer to ``question`` must and must not contain."""

    case_id: str
    question: str = ""
    reference_answer: str | None = None
    expected_terms: tuple[str, ...] = ()
    expected_sources: tuple[ExpectedSource, ...] = ()
    required_context: tuple[str, ...] = ()
    forbidden_phrases: tuple[str, ...] = ()
    stratum: str = "general"
    critical: bool = False
    expects_json: bool = False

    @property
    def has_checks(self) -> bool:
        """Whether the case asks for anything beyond an answer being present."""
        return bool(
            self.reference_answer
            or self.expected_terms
            or self.expected_sources
            or self.required_context
            or self.forbidden_phrases
            or self.expects_json
        )


@dataclass(frozen=True, slots=True)
class RetrievedItem:
    """One retrieved evidence item as the gate sees it."""

    id: str
    title: str = ""
    source: str = ""
    version: str | None = None
    content: str | None = None


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What one run produced for a case (built from its trace); ``None`` means not observed."""

    case_id: str
    answer: str | None
    retrieved: tuple[RetrievedItem, ...] | None
    trace_id: str | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One verdict with the evidence behind it.

    Attributes:
        layer: ``deterministic``, ``guardrail`` or ``judge``.
        name: check, rule or metric name.
        status: the outcome.
        critical: whether a failure belongs to the critical set C (always blocks).
        blocking: whether a failure blocks under the profile (block-mode rule or metric).
        detail: what was found, in words.
        evidence: the snippets, ids or values behind the verdict.
    """

    layer: str
    name: str
    status: CheckStatus
    critical: bool = False
    blocking: bool = False
    detail: str = ""
    evidence: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "layer": self.layer,
            "name": self.name,
            "status": self.status.value,
            "critical": self.critical,
            "blocking": self.blocking,
            "detail": self.detail,
            "evidence": list(self.evidence),
        }


def _strings(value: Any, path: str, line: int, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError("expected a string or a list of strings", path=path, line=line, field=key)


def _sources(value: Any, path: str, line: int) -> tuple[ExpectedSource, ...]:
    out: list[ExpectedSource] = []
    for item in value or []:
        if isinstance(item, str):
            out.append(ExpectedSource(item))
        elif isinstance(item, dict) and isinstance(item.get("source"), str):
            version = item.get("version")
            out.append(ExpectedSource(item["source"], None if version is None else str(version)))
        else:
            raise InputError(
                "expected a source name or {source, version}",
                path=path,
                line=line,
                field="expected_sources",
            )
    return tuple(out)


def _case(row: dict[str, Any], path: str, line: int) -> Case:
    case_id = row.get("case_id", row.get("id"))
    if not isinstance(case_id, str | int) or isinstance(case_id, bool) or case_id == "":
        raise InputError("missing case_id", path=path, line=line, field="case_id")
    stratum = row.get("stratum", "general")
    if stratum not in STRATA:
        raise InputError(
            f"unknown stratum {stratum!r} (expected one of {', '.join(STRATA)})",
            path=path,
            line=line,
            field="stratum",
        )
    reference = row.get("reference_answer", row.get("answer"))
    critical = row.get("critical", stratum == "critical")
    if not isinstance(critical, bool):
        raise InputError("expected true or false", path=path, line=line, field="critical")
    return Case(
        case_id=str(case_id),
        question=str(row.get("question", "")),
        reference_answer=None if reference is None else str(reference),
        expected_terms=_strings(row.get("expected_terms"), path, line, "expected_terms"),
        expected_sources=_sources(row.get("expected_sources"), path, line),
        # A case file written by the demo names the gold supporting titles: they are K*.
        required_context=_strings(
            row.get("required_context", row.get("gold_support_titles")),
            path,
            line,
            "required_context",
        ),
        forbidden_phrases=_strings(row.get("forbidden_phrases"), path, line, "forbidden_phrases"),
        stratum=stratum,
        critical=critical,
        expects_json=bool(row.get("expects_json", False)),
    )


def read_cases(path: str | Path) -> Iterator[Case]:
    """Read a case file (JSONL); errors name the file, line and field."""
    for line_no, row in read_jsonl(path, what="case file"):
        yield _case(row, str(path), line_no)
