"""The span attributes of an evidence list (RETRIEVE / RERANK), as ``(key, value)`` pairs.

One list of normalised items (:mod:`._evidence`) is written three ways:

* ``groundtrace.evidence``: lossless JSON of the documents (by reference, ``length`` and
  ``content_hash``, when evidence content capture is off), kept within the attribute size
  limit as valid JSON, plus ``groundtrace.evidence.count``;
* the OpenInference document list, ``retrieval.documents.<i>.document.*`` (or
  ``reranker.output_documents.<i>.document.*``): id, score, content and a metadata JSON
  repeating title, source, version, rank, content hash and the item's own metadata;
* for RETRIEVE with capture on, the opt-in ``gen_ai.retrieval.documents``
  (``[{"id":"d1","score":0.5}]``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Final

from . import semconv as sc
from ._attributes import safe_json
from ._evidence import evidence_fields
from ._record import AttributeValue, Recorder, as_sequence, content_hash
from ._step import Step, find_query, record_query

__all__ = ["document_attributes", "evidence_attributes", "list_attributes", "record_evidence"]

_EVIDENCE: Final = sc.GT_EVIDENCE
_RERANK: Final = sc.Action.RERANK
_RETRIEVE: Final = sc.Action.RETRIEVE

_KEYS: dict[str, tuple[tuple[str, str, str, str], ...]] = {}


def _document_keys(prefix: str, count: int) -> tuple[tuple[str, str, str, str], ...]:
    """The flattened id, score, content and metadata keys of (at least) the first ``count``
    documents, built once (the table is replaced as a whole: threads never see half of it)."""
    keys = _KEYS.get(prefix, ())
    if len(keys) < count:
        keys = tuple(
            (
                sc.indexed(prefix, index, sc.OI_DOCUMENT_ID),
                sc.indexed(prefix, index, sc.OI_DOCUMENT_SCORE),
                sc.indexed(prefix, index, sc.OI_DOCUMENT_CONTENT),
                sc.indexed(prefix, index, sc.OI_DOCUMENT_METADATA),
            )
            for index in range(max(count, 16))
        )
        _KEYS[prefix] = keys
    return keys


def document_attributes(
    rec: Recorder,
    items: Sequence[object],
    prefix: str,
    capture: bool,
    docs: list[dict[str, Any]],
) -> Iterator[tuple[str, AttributeValue]]:
    """The OpenInference document list: id, score, content and metadata of each document.

    Args:
        rec: the span's recorder (settings; texts are masked and clipped through it).
        items: the returned evidence items (already cut to ``max_evidence_items``).
        prefix: ``retrieval.documents`` or ``reranker.output_documents``.
        capture: whether evidence content is captured.
        docs: receives each document as ``groundtrace.evidence`` holds it.
    """
    settings = rec.settings
    limit = settings.max_attribute_length
    masked = settings.redact is not None
    keys = _document_keys(prefix, len(items))
    for position, item in enumerate(items):
        ev_id, rank, title, source, score, version, content, metadata = evidence_fields(
            item, position
        )
        doc: dict[str, Any] = {"id": ev_id, "rank": rank}
        meta: dict[str, Any] = {}
        if title is not None:
            if masked or len(title) > limit:
                title = rec.text(_EVIDENCE, title)
            doc["title"] = meta["title"] = title
        if source is not None:
            doc["source"] = meta["source"] = source
        if score is not None:
            doc["score"] = score
        if version is not None:
            doc["version"] = meta["version"] = version
        meta["rank"] = rank
        shown = content
        if content is not None:
            doc["length"] = len(content)
            if not capture:
                shown = None
                doc["content_hash"] = meta["content_hash"] = content_hash(content)
            elif masked or len(content) > limit:
                doc["content"] = shown = rec.text(_EVIDENCE, content)
                if shown != content:
                    doc["content_hash"] = meta["content_hash"] = content_hash(content)
            else:
                doc["content"] = content
        if metadata:
            doc["metadata"] = metadata
            meta.update(metadata)
        docs.append(doc)
        key_id, key_score, key_content, key_meta = keys[position]
        if ev_id is not None:
            yield key_id, ev_id
        if score is not None:
            yield key_score, score
        if shown is not None:
            yield key_content, shown
        yield key_meta, safe_json(meta)


def _fit(docs: list[dict[str, Any]], rec: Recorder) -> str:
    """JSON of ``docs`` within the attribute size limit, staying valid JSON."""
    text = safe_json(docs)
    limit = rec.settings.max_attribute_length
    if len(text) <= limit:
        return text
    rec.note_truncated(_EVIDENCE)
    with_content = [d for d in docs if isinstance(d.get("content"), str)]
    if with_content:
        bare = len(safe_json([{k: v for k, v in d.items() if k != "content"} for d in docs]))
        budget = max(0, (limit - bare) // len(with_content) - 16)
        for doc in with_content:
            content = doc["content"]
            if len(content) > budget:
                doc.setdefault("content_hash", content_hash(content))
                doc["content"] = content[:budget]
        text = safe_json(docs)
    while len(text) > limit and docs:
        docs = docs[:-1]
        text = safe_json(docs)
    return text


def evidence_attributes(
    rec: Recorder, value: object, action: sc.Action, total: int | None = None
) -> Iterator[tuple[str, AttributeValue]]:
    """The attributes of a returned evidence list (see the module docstring).

    Args:
        rec: the span's recorder (settings; texts are masked and clipped through it).
        value: the returned collection.
        action: RERANK writes the ``reranker.output_documents`` keys, anything else the
            ``retrieval.documents`` keys.
        total: the number of items returned, when ``value`` holds only the first ones.
    """
    settings = rec.settings
    seq = as_sequence(value)
    count = len(seq) if total is None else total
    if count > settings.max_evidence_items:
        rec.note_truncated(_EVIDENCE)
    capture = "evidence" in settings.capture
    limit = settings.max_evidence_items
    items = seq if len(seq) <= limit else seq[:limit]
    prefix = sc.OI_RERANKER_OUTPUT_DOCUMENTS if action is _RERANK else sc.OI_RETRIEVAL_DOCUMENTS
    docs: list[dict[str, Any]] = []
    return chain(
        document_attributes(rec, items, prefix, capture, docs),
        list_attributes(rec, docs, count, capture and action is _RETRIEVE),
    )


def list_attributes(
    rec: Recorder, docs: list[dict[str, Any]], count: int, genai: bool
) -> Iterator[tuple[str, AttributeValue]]:
    """``groundtrace.evidence`` (of ``docs``), its count and ``gen_ai.retrieval.documents``
    (when ``genai``)."""
    yield _EVIDENCE, _fit(docs, rec)
    yield sc.GT_EVIDENCE_COUNT, count
    if genai:
        entries = [{"id": doc["id"], "score": doc.get("score")} for doc in docs]
        yield sc.GENAI_RETRIEVAL_DOCUMENTS, safe_json(entries)


def record_evidence(
    rec: Recorder, value: object, action: sc.Action, *, total: int | None = None
) -> None:
    """Record a returned evidence list on a RETRIEVE or RERANK span."""
    rec.attrs.update(evidence_attributes(rec, value, action, total))


def retrieval_inputs(step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """RETRIEVE / RERANK: the query among the arguments."""
    spec = step.spec
    record_query(step, spec.action, find_query(spec, args, kwargs))


def evidence_result(step: Step, result: Any, total: int | None) -> None:
    """RETRIEVE / RERANK: the returned evidence list (through ``to_evidence`` if given)."""
    to_evidence = step.spec.options.to_evidence
    if to_evidence is not None:
        result = to_evidence(result)
        total = None
    record_evidence(step, result, step.spec.action, total=total)
