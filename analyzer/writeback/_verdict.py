"""Per-case results as :class:`Verdict` items linked to the span they concern.

Each analysis builds its verdicts from its own result records: the gate's case decisions,
the path status of each case, the judge's scores and protocol errors, the roles of each
evidence item. A verdict needs a trace; a result without one (a case no trace ran) cannot be
linked and is returned in the ``unlinked`` list, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from groundtrace.collectors import Trace
from groundtrace.sdk import semconv as sc

__all__ = ["Linked", "Verdict", "link", "root_spans"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One evaluation result linked to the span it concerns.

    Attributes:
        trace_id: hex trace id of the original trace.
        span_id: hex id of the span evaluated (the request's root span for per-case results,
            the retrieval step for an evidence item).
        name: the evaluation name (``gen_ai.evaluation.name``), e.g. ``groundtrace.gate.case``.
        case_id: the case, when there is one.
        label: the categorical outcome (decision, status, pass/fail, roles).
        score: the numeric score, where the analysis measured one.
        explanation: the reasons, in words.
        error_type: set when the evaluation itself failed (a judge protocol error).
        evidence_id: the evidence item an evidence-role verdict concerns.
    """

    trace_id: str
    span_id: str
    name: str
    case_id: str | None = None
    label: str | None = None
    score: float | None = None
    explanation: str | None = None
    error_type: str | None = None
    evidence_id: str | None = None

    @property
    def identifier(self) -> str:
        """Stable key of the verdict on its span (a rerun replaces, never duplicates)."""
        return f"groundtrace:{self.evidence_id or self.case_id or self.trace_id}"

    def attributes(self) -> dict[str, str | float]:
        """The ``gen_ai.evaluation.result`` attributes of the verdict (unset ones omitted)."""
        pairs: list[tuple[str, str | float | None]] = [
            (sc.GENAI_EVALUATION_NAME, self.name),
            (sc.GENAI_EVALUATION_SCORE_VALUE, self.score),
            (sc.GENAI_EVALUATION_SCORE_LABEL, self.label),
            (sc.GENAI_EVALUATION_EXPLANATION, self.explanation),
            (sc.ERROR_TYPE, self.error_type),
            (sc.GT_EVALUATION_CASE_ID, self.case_id),
            (sc.GT_EVALUATION_EVIDENCE_ID, self.evidence_id),
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


def link(trace_id: str | None, roots: Mapping[str, str]) -> str | None:
    """The root span of ``trace_id``, ``None`` when the trace is unknown."""
    return None if trace_id is None else roots.get(trace_id)
