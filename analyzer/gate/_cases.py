"""What a run produced for the gate's cases: the inputs of the three scoring layers.

The cases themselves are :class:`groundtrace.analyzer.cases.Case`, read by
:func:`groundtrace.analyzer.cases.read_cases`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["CaseOutcome", "CheckResult", "CheckStatus", "RetrievedItem"]


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
class RetrievedItem:
    """One retrieved evidence item as the gate sees it."""

    id: str
    title: str = ""
    source: str = ""
    version: str | None = None
    content: str | None = None


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What one run produced for a case (built from its trace); ``None`` means not observed.

    ``tool_results`` holds the content of each tool call's result, in trace order: what an
    agent's answer rests on (the judge layer judges it against them). ``incomplete`` says why
    the trace lacks spans it had (``Trace.incomplete``): nothing of it is then checked, and
    the case is not evaluable.
    """

    case_id: str
    answer: str | None
    retrieved: tuple[RetrievedItem, ...] | None
    trace_id: str | None = None
    tool_results: tuple[str, ...] = ()
    incomplete: str | None = None


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
