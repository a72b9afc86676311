"""Retrieved documents given as objects (JSON) into evidence, whichever convention wrote them."""

from __future__ import annotations

from typing import Any

from groundtrace.collectors.model import Evidence

from ._values import SpanView

__all__ = ["document_id", "documents_evidence", "evidence_item", "number_or_none"]

#: Field names of one document object, first match wins: OpenInference's ``@tracer.retriever``
#: and GenAI's ``gen_ai.retrieval.documents`` (``id``, ``content``, ``score``), LangChain's
#: ``Document`` (``page_content``) and plain ``text``.
_ID_FIELDS = ("id", "document_id")
_CONTENT_FIELDS = ("content", "page_content", "text")


def _first(doc: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = doc.get(name)
        if value is not None:
            return value
    return None


def number_or_none(v: SpanView, key: str, value: object) -> float | None:
    """``value`` as a float; anything but a number is reported under ``key``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        v.bad(key, "a number", value)
        return None
    return float(value)


def document_id(doc: object) -> Any:
    """The id of a document object, else of its ``metadata`` object (LangChain's serialised
    ``Document`` keeps only ``page_content`` and ``metadata``); ``None``: it has none, or is
    not an object."""
    if not isinstance(doc, dict):
        return None
    found = _first(doc, _ID_FIELDS)
    metadata = doc.get("metadata")
    if found is None and isinstance(metadata, dict):
        found = _first(metadata, _ID_FIELDS)
    return found


def evidence_item(
    v: SpanView,
    stage: str,
    rank: int,
    doc_id: Any,
    content: Any,
    score: float | None,
    metadata: Any,
) -> Evidence:
    """One evidence item of this span (an id is kept as text; other types are dropped)."""
    return Evidence(
        id=None if doc_id is None else str(doc_id),
        step_span_id=v.span.span_id,
        stage=stage,
        rank=rank,
        score=score,
        content=content if isinstance(content, str) else None,
        metadata=metadata if isinstance(metadata, dict) else {},
    )


def documents_evidence(v: SpanView, docs: list[Any], key: str, stage: str) -> list[Evidence]:
    """Evidence from a list of document objects (a string is a document's text) read from
    attribute ``key``; an item that is neither is reported and skipped."""
    out = []
    for rank, item in enumerate(docs, start=1):
        field = f"{key}[{rank - 1}]"
        doc = {"content": item} if isinstance(item, str) else item
        if not isinstance(doc, dict):
            v.bad(field, "a document object or text", doc)
            continue
        score = number_or_none(v, field + ".score", doc.get("score"))
        content, metadata = _first(doc, _CONTENT_FIELDS), doc.get("metadata")
        out.append(evidence_item(v, stage, rank, document_id(doc), content, score, metadata))
    return out
