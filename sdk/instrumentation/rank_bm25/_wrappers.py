"""RETRIEVE spans around ``BM25.get_top_n`` and ``BM25*.get_scores``.

One span per user call: inside a traced ``get_top_n``, the patched ``get_scores`` that the
library calls runs untraced and hands its score array to the outer span (a context
variable), so the ranking is computed from the very scores the library used.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from typing import Any, Final

import numpy as np
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Tracer

from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import (
    AttributeValue,
    Content,
    Recorder,
    Settings,
    Wrapper,
    active_settings,
    logger,
    normalize_item,
    record_evidence,
    record_failure,
    safe_json,
    safe_str,
)

__all__ = ["get_scores_wrapper", "get_top_n_wrapper"]

_CAPTURE_QUERY: Final = Content.QUERY
_MODE: Final = "full_text"


class _ScoresBox:
    """Receives the scores computed inside a traced ``get_top_n``."""

    __slots__ = ("scores",)

    def __init__(self) -> None:
        self.scores: Any = None


_INSIDE_TOP_N: ContextVar[_ScoresBox | None] = ContextVar("groundtrace_bm25_top_n", default=None)


def _query_text(query: Any) -> str:
    if isinstance(query, str):
        return query
    if isinstance(query, list | tuple):
        return " ".join(safe_str(token) for token in query)
    return safe_str(query)


def _document_item(doc: Any, index: int, rank: int, score: float | None) -> dict[str, Any]:
    """Evidence dict of one returned document: id = its index in the corpus."""
    item: dict[str, Any] = {"id": str(index), "rank": rank}
    if score is not None:
        item["score"] = score
    if isinstance(doc, str):
        item["content"] = doc
    elif isinstance(doc, list | tuple) and all(isinstance(t, str) for t in doc):
        item["content"] = " ".join(doc)
    else:
        ev = normalize_item(doc, rank - 1)
        item["content"] = ev.content if ev.content is not None else safe_json(doc)
        if ev.title is not None:
            item["title"] = ev.title
        if ev.source is not None:
            item["source"] = ev.source
        if ev.id is not None and isinstance(doc, Mapping):
            item["metadata"] = {"doc_id": ev.id}
    return item


def _ranking(scores: Any) -> Any:
    """Indices by descending score, exactly as ``BM25.get_top_n`` orders them."""
    return np.argsort(scores)[::-1]


class _Retrieval:
    """One RETRIEVE span."""

    __slots__ = ("rec", "span", "token")

    def __init__(self, tracer: Tracer, current: Settings, instance: Any, method: str) -> None:
        name = type(instance).__name__
        self.span: Span = tracer.start_span(
            f"{sc.GenAIOperation.RETRIEVAL.value} {name}", kind=SpanKind.CLIENT
        )
        self.rec = Recorder(current)
        attrs: dict[str, AttributeValue] = self.rec.attrs
        attrs[sc.GT_ACTION] = sc.Action.RETRIEVE.value
        attrs[sc.GT_STEP_NAME] = f"{name}.{method}"
        attrs[sc.OI_SPAN_KIND] = sc.OpenInferenceSpanKind.RETRIEVER.value
        attrs[sc.GT_RETRIEVAL_RETRIEVER] = name
        attrs[sc.GT_RETRIEVAL_MODE] = _MODE
        if current.genai_latest:
            attrs[sc.GENAI_OPERATION_NAME] = sc.GenAIOperation.RETRIEVAL.value
            attrs[sc.GENAI_DATA_SOURCE_ID] = name
        self.token: Token[Context] | None = otel_context.attach(
            trace.set_span_in_context(self.span)
        )

    def query(self, query: Any) -> None:
        rec = self.rec
        if not rec.settings.captures(_CAPTURE_QUERY):
            return
        text = rec.text(sc.OI_INPUT_VALUE, _query_text(query))
        attrs = rec.attrs
        attrs[sc.OI_INPUT_VALUE] = text
        attrs[sc.OI_INPUT_MIME_TYPE] = "text/plain"
        attrs[sc.GT_RETRIEVAL_QUERY] = text
        if rec.settings.genai_latest:
            attrs[sc.GENAI_RETRIEVAL_QUERY_TEXT] = text

    def k(self, n: Any) -> None:
        if isinstance(n, int) and not isinstance(n, bool):
            attrs = self.rec.attrs
            attrs[sc.GT_RETRIEVAL_K] = n
            if self.rec.settings.genai_latest:
                attrs[sc.GENAI_REQUEST_TOP_K] = float(n)  # a double in the registry

    def detach(self) -> None:
        token, self.token = self.token, None
        if token is not None:
            otel_context.detach(token)

    def end(self, exc: BaseException | None = None) -> None:
        try:
            record_failure(self.span, self.rec, exc)
            self.span.set_attributes(self.rec.final())
        except Exception:
            logger.debug("bm25 span attributes incomplete", exc_info=True)
        finally:
            self.span.end()


def _start(tracer_of: Callable[[], Tracer], instance: Any, method: str) -> _Retrieval | None:
    current = active_settings()
    if current is None:
        return None
    try:
        return _Retrieval(tracer_of(), current, instance, method)
    except Exception:
        logger.debug("bm25 call not traced", exc_info=True)
        return None


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, name: str, default: Any) -> Any:
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _record_scores(ret: _Retrieval, scores: Any) -> None:
    limit = ret.rec.settings.max_evidence_items
    total = len(scores)
    top = _ranking(scores)[:limit]
    items = [
        {"id": str(int(i)), "rank": r + 1, "score": float(scores[i])} for r, i in enumerate(top)
    ]
    record_evidence(ret.rec, items, sc.Action.RETRIEVE, total=total)
    if total > limit:
        ret.rec.note_truncated(sc.GT_EVIDENCE)


def _record_top_n(ret: _Retrieval, result: Any, documents: Any, scores: Any) -> None:
    if not isinstance(result, list):
        return
    items: list[dict[str, Any]] = []
    if scores is not None:  # the library returned [documents[i] for i in this ranking]
        top = _ranking(scores)[: len(result)]
        items = [
            _document_item(result[r], int(i), r + 1, float(scores[i])) for r, i in enumerate(top)
        ]
    if not items and isinstance(documents, Sequence):
        # scores not seen (a subclass overrides get_scores): find the indices by identity
        where = {id(doc): i for i, doc in enumerate(documents)}
        items = [
            _document_item(doc, where.get(id(doc), -1), r + 1, None) for r, doc in enumerate(result)
        ]
    record_evidence(ret.rec, items, sc.Action.RETRIEVE)


def get_scores_wrapper(tracer_of: Callable[[], Tracer]) -> Wrapper:
    """Wrapper for ``BM25Okapi.get_scores`` and siblings."""

    def wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        box = _INSIDE_TOP_N.get()
        if box is not None:  # called by a traced get_top_n: feed its span, no nested span
            scores = wrapped(*args, **kwargs)
            box.scores = scores
            return scores
        ret = _start(tracer_of, instance, "get_scores")
        if ret is None:
            return wrapped(*args, **kwargs)
        try:
            ret.query(_arg(args, kwargs, 0, "query", None))
        except Exception:
            logger.debug("bm25 query not recorded", exc_info=True)
        done = False
        try:
            scores = wrapped(*args, **kwargs)
            done = True
        finally:
            ret.detach()
            if not done:  # the app's exception propagates unchanged
                ret.end(sys.exc_info()[1])
        try:
            _record_scores(ret, scores)
        except Exception:
            logger.debug("bm25 scores not recorded", exc_info=True)
        ret.end()
        return scores

    return wrapper


def get_top_n_wrapper(tracer_of: Callable[[], Tracer]) -> Wrapper:
    """Wrapper for ``BM25.get_top_n``."""

    def wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if _INSIDE_TOP_N.get() is not None:
            return wrapped(*args, **kwargs)
        ret = _start(tracer_of, instance, "get_top_n")
        if ret is None:
            return wrapped(*args, **kwargs)
        try:
            ret.query(_arg(args, kwargs, 0, "query", None))
            ret.k(_arg(args, kwargs, 2, "n", 5))
        except Exception:
            logger.debug("bm25 query not recorded", exc_info=True)
        box = _ScoresBox()
        reset = _INSIDE_TOP_N.set(box)
        done = False
        try:
            result = wrapped(*args, **kwargs)
            done = True
        finally:
            _INSIDE_TOP_N.reset(reset)
            ret.detach()
            if not done:
                ret.end(sys.exc_info()[1])
        try:
            _record_top_n(ret, result, _arg(args, kwargs, 1, "documents", None), box.scores)
        except Exception:
            logger.debug("bm25 results not recorded", exc_info=True)
        ret.end()
        return result

    return wrapper
