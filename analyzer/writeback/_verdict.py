"""Per-case results as :class:`Verdict` items linked to the span they concern.

Each analysis builds its verdicts from its own result records, in its own package (the
``verdicts`` hook of its shape): the gate's case decisions, the path status of each case, the
judge's scores and protocol errors, the roles of each evidence item. Write-back knows no
analysis: it takes the verdicts and sends them. A verdict needs a trace; a result without one
(a case no trace ran) cannot be linked and is returned in the ``unlinked`` list, never dropped
silently.

A label-only verdict (gate decision, path status, evidence roles) also carries a score, so a
backend charts it and a failed result does not look like a passed one. One scale for all:
:attr:`Verdict.PASSED` (1.0) for an outcome that passes, :attr:`Verdict.FAILED` (0.0) for one
that fails, :attr:`Verdict.BETWEEN` (0.5) for one in between; no score where there is no
verdict, so a mean is over the decided results only. Each analysis says which of its labels
is which.

Each verdict names the span it evaluates: the request's root span for per-request results
(gate decision, path status), the LLM call that produced the answer for judge scores (else the
ANSWER step), the retrieval step for an evidence item (with the item's position in that
step's documents).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from groundtrace.collectors import Trace
from groundtrace.sdk import semconv as sc

__all__ = ["Linked", "Target", "Verdict", "answer_spans", "root_spans"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One evaluation result linked to the span it concerns.

    Attributes:
        trace_id: hex trace id of the original trace.
        span_id: hex id of the span evaluated (the request's root span for per-case results,
            the answering LLM call for judge scores, the retrieval step for an evidence item).
        name: the evaluation name (``gen_ai.evaluation.name``), e.g. ``groundtrace.gate.case``.
        case_id: the case, when there is one.
        label: the categorical outcome (decision, status, pass/fail, roles).
        score: the numeric score: the one the analysis measured (a judge score), else the
            label's score on the one scale (:attr:`PASSED`, :attr:`FAILED`, :attr:`BETWEEN`),
            so a backend charts label-only verdicts too; ``None`` where there is no verdict.
        explanation: the reasons, in words.
        error_type: set when the evaluation itself failed (a judge protocol error).
        evidence_id: the evidence item an evidence-role verdict concerns.
        document_position: 0-based position of that item among its retrieval step's
            documents (``retrieval.documents``), when known.
        response_id: ``gen_ai.response.id`` of the completion evaluated, when the trace has it.
    """

    #: Score of a label that passes, fails, or lies in between (a label-only verdict).
    PASSED: ClassVar[float] = 1.0
    FAILED: ClassVar[float] = 0.0
    BETWEEN: ClassVar[float] = 0.5

    trace_id: str
    span_id: str
    name: str
    case_id: str | None = None
    label: str | None = None
    score: float | None = None
    explanation: str | None = None
    error_type: str | None = None
    evidence_id: str | None = None
    document_position: int | None = None
    response_id: str | None = None

    @property
    def per_request(self) -> bool:
        """A result on the whole request (a trace-level annotation), not on one item of it."""
        return self.evidence_id is None

    @property
    def identifier(self) -> str:
        """Stable key of the verdict on its span (a rerun replaces, never duplicates)."""
        return f"groundtrace:{self.evidence_id or self.case_id or self.trace_id}"

    def attributes(self) -> dict[str, str | float | int]:
        """The ``gen_ai.evaluation.result`` attributes of the verdict (unset ones omitted)."""
        pairs: list[tuple[str, str | float | int | None]] = [
            (sc.GENAI_EVALUATION_NAME, self.name),
            (sc.GENAI_EVALUATION_SCORE_VALUE, self.score),
            (sc.GENAI_EVALUATION_SCORE_LABEL, self.label),
            (sc.GENAI_EVALUATION_EXPLANATION, self.explanation),
            (sc.ERROR_TYPE, self.error_type),
            (sc.GENAI_RESPONSE_ID, self.response_id),
            (sc.GT_EVALUATION_CASE_ID, self.case_id),
            (sc.GT_EVALUATION_EVIDENCE_ID, self.evidence_id),
            (sc.GT_EVALUATION_DOCUMENT_POSITION, self.document_position),
        ]
        return {k: v for k, v in pairs if v is not None}


@dataclass(frozen=True, slots=True)
class Linked:
    """Verdicts built from one analysis, and the results that have no trace to go to."""

    verdicts: tuple[Verdict, ...]
    unlinked: tuple[str, ...] = ()

    @classmethod
    def collect(cls, items: Iterable[Verdict | str]) -> Linked:
        """Split verdicts from the ids of results that could not be linked."""
        verdicts: list[Verdict] = []
        unlinked: list[str] = []
        for item in items:
            if isinstance(item, Verdict):
                verdicts.append(item)
            else:
                unlinked.append(item)
        return cls(tuple(verdicts), tuple(unlinked))


def root_spans(traces: Iterable[Trace]) -> dict[str, str]:
    """Trace id -> id of its root span (the first step without a parent, else the first step)."""
    roots: dict[str, str] = {}
    for trace in traces:
        if not trace.steps:
            continue
        root = next((s for s in trace.steps if s.parent_span_id is None), trace.steps[0])
        roots.setdefault(trace.trace_id, root.span_id)
    return roots


@dataclass(frozen=True, slots=True)
class Target:
    """The span a judge score is attached to, and the completion's response id there."""

    span_id: str
    response_id: str | None = None


def _below(parents: Mapping[str, str | None], span: str | None, ancestor: str) -> bool:
    """Whether ``span`` is ``ancestor`` or lies below it (a cycle of parents ends the walk)."""
    for _ in range(len(parents) + 1):
        if span is None:
            return False
        if span == ancestor:
            return True
        span = parents.get(span)
    return False


def answer_spans(traces: Iterable[Trace]) -> dict[str, Target]:
    """Trace id -> the span that produced its answer: what a judge score evaluates.

    The last LLM call below the ANSWER step (with its ``gen_ai.response.id``), else the ANSWER
    step, else the last LLM call, else the root span.
    """
    targets: dict[str, Target] = {}
    for trace in traces:
        if not trace.steps or trace.trace_id in targets:
            continue
        parents = {s.span_id: s.parent_span_id for s in trace.steps}
        answers = [s.span_id for s in trace.steps if s.action == sc.Action.ANSWER.value]
        llms = [s for s in trace.steps if s.action == sc.Action.LLM.value]
        answer = answers[-1] if answers else None
        if answer is not None:
            llms = [s for s in llms if _below(parents, s.span_id, answer)]
        if llms:
            raw = llms[-1].attributes.get(sc.GENAI_RESPONSE_ID)
            response = raw if isinstance(raw, str) and raw else None
            targets[trace.trace_id] = Target(llms[-1].span_id, response)
        elif answer is not None:
            targets[trace.trace_id] = Target(answer)
        else:
            root = next((s for s in trace.steps if s.parent_span_id is None), trace.steps[0])
            targets[trace.trace_id] = Target(root.span_id)
    return targets
