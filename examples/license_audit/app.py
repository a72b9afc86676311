"""The instrumented licence-audit app: the audit's traced per-source app with BM25 retrieval.

One request answers one question from one licence alone (one trace each), through the public
:func:`groundtrace.analyzer.audit.answer_from_source`: REQUEST (app ``license-audit``, version
``1.0.0+<retrieval>``, the source id), RETRIEVE with this example's :mod:`.retrieval` (whole /
hierarchical, or flat top-k) and ANSWER with an answerer of the audit -- the offline
:func:`~groundtrace.analyzer.audit.extractive_answer` (the questions' cues) or an
:class:`~groundtrace.analyzer.audit.EndpointAnswerer`.

Usage::

    import asyncio
    answer = asyncio.run(answer_one(question, source, cues, extractive_answer, "auto"))
"""

from __future__ import annotations

import functools
from typing import Final

from groundtrace.analyzer.audit import (
    Answer,
    AnswerFn,
    Chosen,
    Cues,
    Question,
    Retriever,
    Source,
    answer_from_source,
    extractive_answer,
)

from .retrieval import RetrievalMode, retrieve_evidence

__all__ = [
    "APP_NAME",
    "APP_VERSION",
    "SPAN_NAME",
    "AnswerFn",
    "answer_one",
    "app_version",
    "extractive_answer",
    "retriever",
]

APP_NAME: Final = "license-audit"
APP_VERSION: Final = "1.0.0"
#: The REQUEST span's name.
SPAN_NAME: Final = "license_audit"


def app_version(retrieval: RetrievalMode) -> str:
    """Version label of the app configuration (its retrieval mode)."""
    return f"{APP_VERSION}+{'hierarchical' if retrieval == 'auto' else 'flat'}"


def _retrieve(
    mode: RetrievalMode, query: str, source: Source
) -> tuple[list[dict[str, object]], Chosen]:
    return retrieve_evidence(query, source, mode)


def retriever(mode: RetrievalMode) -> Retriever:
    """The audit's RETRIEVE step with this example's retrieval in ``mode`` (it pickles)."""
    return functools.partial(_retrieve, mode)


async def answer_one(
    question: Question,
    source: Source,
    cues: Cues,
    answerer: AnswerFn,
    retrieval: RetrievalMode = "auto",
) -> Answer:
    """Answer ``question`` from ``source`` alone: one trace rooted in a REQUEST span."""
    return await answer_from_source(
        question, source, answerer, cues=cues, retriever=retriever(retrieval),
        app_name=APP_NAME, app_version=app_version(retrieval), span_name=SPAN_NAME,
    )  # fmt: skip
