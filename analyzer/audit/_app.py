"""The audit's instrumented per-source app: REQUEST -> RETRIEVE -> ANSWER, one trace per answer.

One request answers one question from one source alone:

* REQUEST (``@request``): the question, the case id ``<question>/<source>`` and the source id
  (``groundtrace.source.id``), the app's name and version;
* RETRIEVE (``gt.step``): the evidence a :data:`Retriever` takes from the source for the
  question plus its topics, with the mode, sections, chunks and the source's length
  (``groundtrace.retrieval.*``); :func:`whole_source` (the default) passes the source whole;
* ANSWER (``@answer``): an :data:`~groundtrace.analyzer.audit.AnswerFn` turns the evidence into a
  stance, its points and the quote it rests on.

:class:`TracedAnswering` is that app as the audit's ``answer_one``: it pickles, so a cluster
worker runs it too, and the first answer in a process configures the SDK's file exporter into
the run's ``traces/`` folder there (one ``traces-<pid>.jsonl`` per process).

Usage::

    one = TracedAnswering(Path("runs/a/traces"), extractive_answer, cues)
    answer = await one(question, source)
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol, cast

from opentelemetry import trace

import groundtrace.sdk as gt
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.sdk import Action, request, step
from groundtrace.sdk import answer as answer_step
from groundtrace.sdk import semconv as sc

from ._answerers import AnswerFn, Cues
from ._model import Answer, Question, Source

__all__ = [
    "AUDIT_APP_NAME",
    "AUDIT_APP_VERSION",
    "Chosen",
    "Retriever",
    "TracedAnswering",
    "answer_from_source",
    "named_retriever",
    "whole_source",
]

AUDIT_APP_NAME: Final = "groundtrace-audit"
AUDIT_APP_VERSION: Final = "1.0.0+whole"
_NO_CUES: Final = Cues()


class Chosen(Protocol):
    """What a retriever chose, recorded on the RETRIEVE span."""

    @property
    def mode(self) -> str:
        """``whole``, ``hierarchical``, ``flat``..."""

    @property
    def sections(self) -> tuple[str, ...]:
        """Ids of the sections chosen."""

    @property
    def chunks(self) -> tuple[str, ...]:
        """Ids of the chunks returned."""

    @property
    def source_words(self) -> int:
        """Length of the source in words."""


#: A retriever: (query, source) -> (evidence items ``id``/``title``/``rank``/``content``, chosen).
Retriever = Callable[[str, Source], tuple[list[dict[str, object]], Chosen]]


@dataclass(frozen=True, slots=True)
class _Whole:
    mode: str
    sections: tuple[str, ...]
    chunks: tuple[str, ...]
    source_words: int


def whole_source(query: str, source: Source) -> tuple[list[dict[str, object]], Chosen]:
    """The source whole, as one evidence item ``<source>:all`` (mode ``whole``)."""
    del query
    item: dict[str, object] = {
        "id": f"{source.id}:all", "title": source.title, "rank": 1, "content": source.text,
    }  # fmt: skip
    return [item], _Whole("whole", (), (), len(source.text.split()))


def named_retriever(reference: str) -> Retriever:
    """The retriever ``reference`` (``module:qualname``) names, imported.

    Raises:
        ConfigError: malformed, not importable, or not callable (field ``retriever``).
    """
    module, sep, qualname = reference.rpartition(":")
    if not sep or not module or not qualname:
        raise ConfigError(f"retriever {reference!r} is not of the form module:qualname",
                          field="retriever")  # fmt: skip
    try:
        found: object = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"cannot import the retriever {reference!r}: {exc} (install its "
            "package or put its folder on PYTHONPATH)",
            field="retriever",
        ) from None
    if not callable(found):
        raise ConfigError(f"retriever {reference!r} is not callable", field="retriever")
    return cast("Retriever", found)


@answer_step(name="answer", query_param="question", evidence_param="evidence")
async def _generate(
    question: str, evidence: Sequence[Mapping[str, object]], *, cues: Cues, answerer: AnswerFn
) -> dict[str, object]:
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
    cues: Cues,
    answerer: AnswerFn,
    retriever: Retriever,
) -> Answer:
    del case_id  # recorded on the span by the decorator
    query = " ".join((question, *topics))  # the question's topics expand the retriever's query
    with step(Action.RETRIEVE, retriever="bm25", query=query) as handle:
        evidence, chosen = retriever(query, source)
        handle.record_evidence(evidence)
        span = handle.span
        span.set_attribute(sc.GT_RETRIEVAL_MODE, chosen.mode)
        span.set_attribute(sc.GT_RETRIEVAL_SECTIONS, list(chosen.sections))
        span.set_attribute(sc.GT_RETRIEVAL_CHUNKS, list(chosen.chunks))
        span.set_attribute(sc.GT_RETRIEVAL_SOURCE_WORDS, chosen.source_words)
    reply = await _generate(question, evidence, cues=cues, answerer=answerer)
    context = trace.get_current_span().get_span_context()
    stance = reply.get("stance")
    return Answer(
        question_id=question_id,
        source_id=source_id,
        stance=stance if stance in ("yes", "no", "conditional") else "absent",
        points=tuple(str(p) for p in (reply.get("points") or ())),  # type: ignore[attr-defined]
        text=str(reply.get("answer", "")),
        quote=str(reply.get("quote", "")),
        trace_id=format(context.trace_id, "032x") if context.is_valid else None,
        error=None if reply.get("error") is None else str(reply["error"]),
    )


@functools.cache
def _request_step(name: str, app_name: str, version: str) -> Callable[..., Awaitable[Answer]]:
    wrapped: Callable[..., Awaitable[Answer]] = request(
        name=name, query_param="question", app_name=app_name, app_version=version
    )(_request)
    return wrapped


async def answer_from_source(
    question: Question,
    source: Source,
    answerer: AnswerFn,
    *,
    cues: Cues = _NO_CUES,
    retriever: Retriever = whole_source,
    app_name: str = AUDIT_APP_NAME,
    app_version: str = AUDIT_APP_VERSION,
    span_name: str = "audit_answer",
) -> Answer:
    """Answer ``question`` from ``source`` alone: one trace rooted in a REQUEST span."""
    return await _request_step(span_name, app_name, app_version)(
        question.text,
        case_id=f"{question.id}/{source.id}",
        source_id=source.id,
        source=source,
        question_id=question.id,
        topics=question.topics,
        cues=cues,
        answerer=answerer,
        retriever=retriever,
    )


@dataclass(slots=True)
class TracedAnswering:
    """The audit's ``answer_one``: :func:`answer_from_source`, traced into ``traces``.

    Attributes:
        traces: the run's traces folder.
        answerer: the ANSWER step's answerer.
        cues: question id -> its cues (questions without are answered with none).
        retriever: the RETRIEVE step (default: the source whole).
        app_name: the app name on the REQUEST span and the exporter's service name.
        app_version: the app version.
        span_name: the REQUEST span's name.
    """

    traces: Path
    answerer: AnswerFn
    cues: Mapping[str, Cues] = field(default_factory=dict)
    retriever: Retriever = whole_source
    app_name: str = AUDIT_APP_NAME
    app_version: str = AUDIT_APP_VERSION
    span_name: str = "audit_answer"
    traced_in: int = 0

    def trace_here(self) -> None:
        """Configure the SDK's file exporter in this process, once (creating the folder)."""
        if self.traced_in != os.getpid():
            try:
                self.traces.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(
                    f"cannot create the traces folder: {exc.strerror}", path=str(self.traces)
                ) from None
            gt.configure(
                service_name=self.app_name, app_version=self.app_version, exporter="file",
                file_path=self.traces, capture_content=True,
            )  # fmt: skip
            self.traced_in = os.getpid()

    async def __call__(self, question: Question, source: Source) -> Answer:
        """One answer, traced into :attr:`traces`."""
        self.trace_here()
        return await self.untraced(question, source)

    async def untraced(self, question: Question, source: Source) -> Answer:
        """One answer without configuring the exporter (an estimate writes nothing)."""
        return await answer_from_source(
            question, source, self.answerer, cues=self.cues.get(question.id, _NO_CUES),
            retriever=self.retriever, app_name=self.app_name, app_version=self.app_version,
            span_name=self.span_name,
        )  # fmt: skip

    async def aclose(self) -> None:
        """Flush this process's traces (a cluster worker calls it before it stops)."""
        if self.traced_in == os.getpid():
            gt.shutdown()
            self.traced_in = 0
