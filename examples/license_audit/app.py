"""The instrumented licence-audit app: the audit's traced per-source app with BM25 retrieval.

One request answers one question from one licence alone (one trace each), through the public
:func:`groundtrace.analyzer.audit.answer_from_source`: REQUEST (app ``license-audit``, version
``1.0.0+<retrieval>``, the source id), RETRIEVE with this example's :mod:`.retrieval` (whole /
hierarchical, or flat top-k) and ANSWER with an answerer of the audit -- the offline
:func:`~groundtrace.analyzer.audit.extractive_answer` (the questions' cues) or an
:class:`~groundtrace.analyzer.audit.EndpointAnswerer`.

An audit config names this retrieval as its retriever: ``retriever =
"groundtrace.examples.license_audit.app:hierarchical"`` (or ``:flat``), which is what
``groundtrace audit run`` without ``--sources`` runs.

Usage::

    answer = await answer_one(question, source, cues, extractive_answer, "auto")
"""

from __future__ import annotations

from dataclasses import dataclass
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
    "LicenceRetriever",
    "answer_one",
    "app_version",
    "extractive_answer",
    "flat",
    "hierarchical",
    "retriever",
]

APP_NAME: Final = "license-audit"
APP_VERSION: Final = "1.0.0"
#: The REQUEST span's name.
SPAN_NAME: Final = "license_audit"


def app_version(retrieval: RetrievalMode) -> str:
    """Version label of the app configuration (its retrieval mode)."""
    return f"{APP_VERSION}+{'hierarchical' if retrieval == 'auto' else 'flat'}"


@dataclass(frozen=True, slots=True)
class LicenceRetriever:
    """The audit's RETRIEVE step with this example's retrieval in ``mode`` (it pickles).

    Its attributes label the run (``mode``: the run's ``retrieval`` setting) and its traces
    (the app's name and version, the REQUEST span's name).

    Attributes:
        mode: ``auto`` (whole / hierarchical) or ``flat``.
        app_name: the app name on the REQUEST span.
        span_name: the REQUEST span's name.
    """

    mode: RetrievalMode
    app_name: str = APP_NAME
    span_name: str = SPAN_NAME

    @property
    def app_version(self) -> str:
        """The app version (its retrieval mode)."""
        return app_version(self.mode)

    def __call__(self, query: str, source: Source) -> tuple[list[dict[str, object]], Chosen]:
        """The evidence for ``query`` from ``source``, and what was chosen."""
        return retrieve_evidence(query, source, self.mode)


#: Whole short licences, hierarchical retrieval in long ones (the audit config's retriever).
hierarchical: Final = LicenceRetriever("auto")
#: Flat BM25 top-k in every licence (the comparison run's retriever).
flat: Final = LicenceRetriever("flat")


def retriever(mode: RetrievalMode) -> Retriever:
    """The audit's RETRIEVE step with this example's retrieval in ``mode`` (it pickles)."""
    return LicenceRetriever(mode)


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
