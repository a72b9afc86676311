"""Cases, per-metric results and protocol errors of a judge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Protocol, runtime_checkable

import msgspec

__all__ = [
    "DEFAULT_THRESHOLD",
    "ContextSource",
    "Judge",
    "JudgeCase",
    "Judgment",
    "Metric",
    "ProtocolError",
    "ProtocolErrorKind",
]


#: The working threshold (a score >= it passes) of ``judge validate``, ``run`` and ``check``
#: and of an acceptance profile that sets none; it is part of the judge fingerprint.
DEFAULT_THRESHOLD: Final = 0.8


class Metric(StrEnum):
    """The RAG triad."""

    CONTEXT_RELEVANCE = "context_relevance"
    ADHERENCE = "adherence"
    ANSWER_RELEVANCE = "answer_relevance"


class ProtocolErrorKind(StrEnum):
    """Why a judge produced no usable score for a metric (SPEC §4.4)."""

    MALFORMED_JSON = "malformed_json"
    MISSING = "missing"
    NON_NUMERIC = "non_numeric"
    OUT_OF_RANGE = "out_of_range"
    REFUSAL = "refusal"
    TRUNCATION = "truncation"
    TIMEOUT = "timeout"
    HTTP_ERROR = "http_error"
    CONNECTION = "connection"
    INVALID_RESPONSE = "invalid_response"
    #: the call was recorded, not sent (``--estimate``)
    NOT_SENT = "not_sent"


class ContextSource(StrEnum):
    """What the context an answer is judged against is (stated in each judgment)."""

    #: the evidence a RAG app retrieved (or a case file's or gold item's passages)
    DOCUMENTS = "retrieved documents"
    #: the results of the tool calls an agent made
    TOOL_RESULTS = "tool results"
    #: both: the retrieved documents, then the tool results
    BOTH = "retrieved documents and tool results"


@dataclass(frozen=True, slots=True)
class JudgeCase:
    """What a judge sees of one case.

    Attributes:
        case_id: stable id (trace id, case id or gold item id).
        query: the user's question.
        context: the texts the answer is judged against, in order: the retrieved evidence
            and/or the tool results.
        answer: the answer to judge.
        source: what ``context`` is.
    """

    case_id: str
    query: str
    context: tuple[str, ...]
    answer: str
    source: ContextSource = ContextSource.DOCUMENTS

    @property
    def context_text(self) -> str:
        """The evidence joined with blank lines."""
        return "\n\n".join(self.context)


class ProtocolError(msgspec.Struct, frozen=True):
    """A metric the judge failed to score: the metric fails and the case goes to review.

    Attributes:
        metric: the metric concerned.
        kind: error category.
        message: what was wrong.
        raw: the raw model output (or failure body) that caused it.
    """

    metric: Metric
    kind: ProtocolErrorKind
    message: str
    raw: str | None = None


class Judgment(msgspec.Struct, frozen=True):
    """The judge's verdict on one case (a line of ``judgments.jsonl``); what
    :meth:`Judge.judge` returns (called ``JudgeResult`` before 0.2.0, a name that now means the
    analysis's result).

    Attributes:
        case_id: the case judged.
        scores: accepted scores in [0, 1] (only metrics without a protocol error).
        rationale: the judge's short explanation, if it gave one.
        errors: protocol errors, one per failed metric.
        raw: the raw judge output, for audit.
        details: what the judge reported beyond the scores.
        context: what the answer was judged against (a :class:`ContextSource` value:
            ``retrieved documents``, ``tool results`` or both).
    """

    case_id: str
    scores: dict[Metric, float]
    rationale: str | None = None
    errors: tuple[ProtocolError, ...] = ()
    raw: str | None = None
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    context: str | None = None

    @property
    def needs_review(self) -> bool:
        """True when any metric failed by protocol error (route the case to manual review)."""
        return bool(self.errors)

    def error_for(self, metric: Metric) -> ProtocolError | None:
        """The protocol error of ``metric``, if any."""
        return next((e for e in self.errors if e.metric is metric), None)


@runtime_checkable
class Judge(Protocol):
    """Anything that scores cases on the RAG triad.

    Implementations never raise for a bad model output: they return protocol errors.
    """

    @property
    def name(self) -> str:
        """Short identifier (``lexical``, ``llm``)."""
        ...

    def fingerprint(self, threshold: float) -> Mapping[str, Any]:
        """The identity this judge's validation record is bound to (see ``_fingerprint``)."""
        ...

    async def judge(self, case: JudgeCase) -> Judgment:
        """Score one case."""
        ...
