"""The audit's result records (typed, versioned; see :mod:`groundtrace.analyzer._results`)."""

from __future__ import annotations

import msgspec

from groundtrace.analyzer._results import Result
from groundtrace.analyzer.llm import ClientCounts

from ._model import Answer, PairLabel, Question
from ._summary import AuditSummary
from ._validate import AuditValidation

__all__ = ["AuditResult", "AuditSettings", "PairError", "SourceInfo"]


class AuditSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How a run was made.

    Attributes:
        retrieval: ``auto`` (whole / hierarchical) or ``flat``.
        answerer: ``extractive`` or ``<model>@<endpoint>``.
        labeller: ``baseline`` or ``judge:<model>@<endpoint>``.
        concurrency: requests in flight.
        seed: bootstrap seed of the validation.
    """

    retrieval: str = "auto"
    answerer: str = "extractive"
    labeller: str = "baseline"
    concurrency: int = 8
    seed: int = 20260709


class SourceInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A source as a run records it (without its text)."""

    id: str
    group: str
    title: str
    metadata: dict[str, str] = msgspec.field(default_factory=dict)


class PairError(msgspec.Struct, frozen=True, kw_only=True):
    """A pair the labeller could not label: a visible protocol error, never imputed."""

    question_id: str
    source_a: str
    source_b: str
    kind: str
    message: str


class AuditResult(Result, frozen=True, kw_only=True):
    """One audit run: every answer, every pair label, the figures and (with gold) validation.

    Attributes:
        corpus: corpus name.
        settings: how the run was made.
        questions: the questions.
        sources: the sources.
        answers: one per (question, in-scope source).
        pairs: the counted label of every pair of answers to a question (both readable).
        pair_errors: protocol errors of the answerer or the labeller (visible, never imputed:
            a pair whose counted labeller failed has no label).
        review: labels of a pair judge that is not validated (review-only; the counted label
            of those pairs is the baseline's).
        summary: the figures.
        validation: the labels against the gold pair labels, when the corpus has gold.
        wall_seconds: wall time of the run.
        model_calls: the model client's call counts (None when no model was called).
    """

    corpus: str
    settings: AuditSettings
    questions: tuple[Question, ...]
    sources: tuple[SourceInfo, ...]
    answers: tuple[Answer, ...]
    pairs: tuple[PairLabel, ...]
    pair_errors: tuple[PairError, ...]
    review: tuple[PairLabel, ...]
    summary: AuditSummary
    validation: AuditValidation | None
    wall_seconds: float
    model_calls: dict[str, ClientCounts] | None = None
