"""The instrumented licence-audit app: REQUEST -> RETRIEVE -> ANSWER, one trace per answer.

One request answers one question from one licence alone:

* REQUEST (``@request``): the question, the case id ``<question>/<source>`` and the source id
  (``groundtrace.source.id``), app ``license-audit`` and version ``1.0.0+<retrieval>``;
* RETRIEVE (``gt.step``): the evidence from :mod:`.retrieval` for the question plus its topics
  (the retriever's query), with the mode, the sections and the chunks chosen and the source's
  length (``groundtrace.retrieval.*``);
* ANSWER (``@answer``): an answerer turns the evidence into a stance (yes / no / conditional /
  absent), its points and the quote it rests on -- the offline :func:`extractive_answer` or an
  :class:`EndpointAnswerer` (any OpenAI-compatible endpoint through the shared model client).

Usage::

    import asyncio
    answer = asyncio.run(answer_one(question, source, cues, extractive_answer, "auto"))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from opentelemetry import trace

from groundtrace.analyzer.audit import Answer, Question, Source, Stance
from groundtrace.sdk import Action, request, step
from groundtrace.sdk import answer as answer_step
from groundtrace.sdk import semconv as sc

from .corpus import QuestionCues, render_answer
from .retrieval import RetrievalMode, retrieve_evidence

__all__ = [
    "APP_NAME",
    "APP_VERSION",
    "AnswerFn",
    "answer_one",
    "app_version",
    "extractive_answer",
    "generate",
]

APP_NAME: Final = "license-audit"
APP_VERSION: Final = "1.0.0"
#: An answerer: (question text, evidence items, cues) -> the ANSWER step's reply mapping
#: (``answer``, ``stance``, ``points``, ``quote`` and, on a protocol error, ``error``).
AnswerFn = Callable[[str, Sequence[Mapping[str, Any]], QuestionCues], Awaitable[dict[str, Any]]]
_SENTENCE: Final = re.compile(r"(?<=[.;:!?])\s+|\n\s*\n")


def app_version(retrieval: RetrievalMode) -> str:
    """Version label of the app configuration (its retrieval mode)."""
    return f"{APP_VERSION}+{'hierarchical' if retrieval == 'auto' else 'flat'}"


def _sentences(evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for item in evidence:
        out.extend(" ".join(s.split()) for s in _SENTENCE.split(str(item.get("content", ""))))
    return [s for s in out if s]


def _first(patterns: Sequence[str], sentences: Sequence[str]) -> str | None:
    for sentence in sentences:
        if any(re.search(p, sentence, re.IGNORECASE) for p in patterns):
            return sentence
    return None


async def extractive_answer(
    question: str, evidence: Sequence[Mapping[str, Any]], cues: QuestionCues
) -> dict[str, Any]:
    """The offline, deterministic answerer: the first cue found decides the stance.

    Stances are tried in ``cues.order``; a conditional answer carries every qualifier whose cue
    occurs; a list question (``cues.points``) answers yes with every point whose cue occurs.
    Nothing found: ``absent``.
    """
    del question  # the cues encode what is asked
    sentences = _sentences(evidence)
    stance: Stance = "absent"
    points: tuple[str, ...] = ()
    quote = ""
    if cues.points:
        found = {p: _first(c, sentences) for p, c in cues.points.items()}
        points = tuple(sorted(p for p, s in found.items() if s))
        quotes = [s for s in found.values() if s]
        stance, quote = ("yes", quotes[0]) if points else ("absent", "")
    else:
        for candidate in cues.order:
            if candidate == "conditional":
                found = {q: _first(c, sentences) for q, c in cues.conditional.items()}
                hits = sorted(q for q, s in found.items() if s)
                if hits:
                    stance, points = "conditional", tuple(hits)
                    quote = next(s for s in found.values() if s)
                    break
            elif hit := _first(cues.yes if candidate == "yes" else cues.no, sentences):
                stance, quote = candidate, hit
                break
    return {
        "answer": render_answer(stance, points),
        "stance": stance,
        "points": list(points),
        "quote": quote,
    }


@answer_step(name="answer", query_param="question", evidence_param="evidence")
async def generate(
    question: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    cues: QuestionCues,
    answerer: AnswerFn,
) -> dict[str, Any]:
    """ANSWER: the answerer's reply to ``question`` from ``evidence``."""
    return await answerer(question, evidence, cues)


async def _request(
    question: str,
    case_id: str,
    source_id: str,
    *,
    source: Source,
    question_id: str,
    topics: tuple[str, ...],
    cues: QuestionCues,
    answerer: AnswerFn,
    retrieval: RetrievalMode,
) -> Answer:
    del case_id  # recorded on the span by the decorator
    query = " ".join((question, *topics))  # the question's topics expand the BM25 query
    with step(Action.RETRIEVE, retriever="bm25", query=query) as handle:
        evidence, chosen = retrieve_evidence(query, source, retrieval)
        handle.record_evidence(evidence)
        span = handle.span
        span.set_attribute(sc.GT_RETRIEVAL_MODE, chosen.mode)
        span.set_attribute(sc.GT_RETRIEVAL_SECTIONS, list(chosen.sections))
        span.set_attribute(sc.GT_RETRIEVAL_CHUNKS, list(chosen.chunks))
        span.set_attribute(sc.GT_RETRIEVAL_SOURCE_WORDS, chosen.source_words)
    reply = await generate(question, evidence, cues=cues, answerer=answerer)
    context = trace.get_current_span().get_span_context()
    return Answer(
        question_id=question_id,
        source_id=source_id,
        stance=reply["stance"],
        points=tuple(reply.get("points") or ()),
        text=str(reply.get("answer", "")),
        quote=str(reply.get("quote", "")),
        trace_id=format(context.trace_id, "032x") if context.is_valid else None,
        error=reply.get("error"),
    )


@functools.cache
def _request_step(version: str) -> Callable[..., Awaitable[Answer]]:
    wrapped: Callable[..., Awaitable[Answer]] = request(
        name="license_audit", query_param="question", app_name=APP_NAME, app_version=version
    )(_request)
    return wrapped


async def answer_one(
    question: Question,
    source: Source,
    cues: QuestionCues,
    answerer: AnswerFn,
    retrieval: RetrievalMode = "auto",
) -> Answer:
    """Answer ``question`` from ``source`` alone: one trace rooted in a REQUEST span."""
    return await _request_step(app_version(retrieval))(
        question.text,
        case_id=f"{question.id}/{source.id}",
        source_id=source.id,
        source=source,
        question_id=question.id,
        topics=question.topics,
        cues=cues,
        answerer=answerer,
        retrieval=retrieval,
    )
