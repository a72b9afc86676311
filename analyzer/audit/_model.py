"""The audit's inputs and per-item outputs: sources, questions, answers and pair labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from groundtrace.analyzer.errors import InputError

__all__ = [
    "GENERAL_SCOPE",
    "LABELS",
    "Answer",
    "Corpus",
    "Label",
    "PairLabel",
    "Question",
    "Significance",
    "Source",
    "Stance",
    "in_scope",
]

#: A question of this scope is asked of every source; any other scope names one group.
GENERAL_SCOPE: Final = "general"

Stance = Literal["yes", "no", "conditional", "absent"]
Label = Literal["absent", "consistent", "complementary", "divergent", "contradictory"]
Significance = Literal["low", "medium", "high"]
#: The five pair labels, from agreement to incompatibility.
LABELS: Final[tuple[Label, ...]] = (
    "absent",
    "consistent",
    "complementary",
    "divergent",
    "contradictory",
)


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """One document of a multi-author corpus.

    Attributes:
        id: stable id (the licence corpus uses the SPDX id, lower-cased).
        group: the group questions may be scoped to, e.g. ``"copyleft"``.
        title: human-readable title.
        text: the full text the answers are grounded in.
        metadata: author, version... (free-form strings).
    """

    id: str
    group: str
    title: str
    text: str
    metadata: dict[str, str] = msgspec.field(default_factory=dict)


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """A question asked once per in-scope source.

    Attributes:
        id: stable id.
        text: the question.
        scope: :data:`GENERAL_SCOPE` or the group whose sources are asked.
        topics: what the question is about; the first one names a divergence's topic.
    """

    id: str
    text: str
    scope: str
    topics: tuple[str, ...]


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """One source's answer to one question.

    Attributes:
        question_id: the question.
        source_id: the source the answer is grounded in.
        stance: ``yes`` / ``no`` / ``conditional`` / ``absent`` (the source does not say).
        points: normalised claims (qualifiers of a conditional answer, items of a list).
        text: the answer as given.
        quote: the source passage the answer rests on ("" when absent).
        trace_id: hex id of the trace that produced it (None for gold answers).
        error: the protocol error of a reply that could not be read (the answer then has no
            stance of its own: ``absent`` is recorded, and the pair is left out, not imputed).
    """

    question_id: str
    source_id: str
    stance: Stance
    points: tuple[str, ...] = ()
    text: str = ""
    quote: str = ""
    trace_id: str | None = None
    error: str | None = None


class PairLabel(msgspec.Struct, frozen=True, kw_only=True):
    """The label of one pair of answers to one question (``source_a`` < ``source_b``).

    Attributes:
        question_id: the question.
        source_a: first source id.
        source_b: second source id.
        label: one of :data:`LABELS`.
        topic: what the answers differ on (None when they do not).
        significance: practical significance of a difference (None when there is none).
        decided_by: ``prefilter:<rule>``, ``baseline``, ``judge`` or ``gold``.
        review_only: True for labels of a judge that is not validated.
    """

    question_id: str
    source_a: str
    source_b: str
    label: Label
    topic: str | None = None
    significance: Significance | None = None
    decided_by: str = "baseline"
    review_only: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        """``(question_id, source_a, source_b)``: what pairs labels of two runs."""
        return (self.question_id, self.source_a, self.source_b)


class Corpus(msgspec.Struct, frozen=True, kw_only=True):
    """Sources, questions and (optionally) gold answers of one audit.

    Attributes:
        name: corpus name, e.g. ``"licenses"``.
        sources: the sources, ids unique.
        questions: the questions, ids unique, scopes general or a known group.
        gold: gold answers per (question, in-scope source), when known.
    """

    name: str
    sources: tuple[Source, ...]
    questions: tuple[Question, ...]
    gold: tuple[Answer, ...] = ()

    def __post_init__(self) -> None:
        groups = {s.group for s in self.sources}
        for label, ids in (
            ("source", [s.id for s in self.sources]),
            ("question", [q.id for q in self.questions]),
        ):
            seen: set[str] = set()
            for item in ids:
                if item in seen:
                    raise InputError(f"duplicate {label} id {item!r}", path=self.name, field="id")
                seen.add(item)
        for question in self.questions:
            if question.scope != GENERAL_SCOPE and question.scope not in groups:
                raise InputError(
                    f"question {question.id!r} is scoped to unknown group {question.scope!r} "
                    f"(groups: {', '.join(sorted(groups))})", path=self.name, field="scope",
                )  # fmt: skip


def in_scope(question: Question, sources: Sequence[Source]) -> list[Source]:
    """The sources ``question`` is asked of, in corpus order."""
    if question.scope == GENERAL_SCOPE:
        return list(sources)
    return [s for s in sources if s.group == question.scope]
