"""The span attributes of an evidence list (RETRIEVE / RERANK).

One list of normalised items (:mod:`._evidence`) is written three ways, straight into the
span's attribute dict (as every recorder writes; one ``set_attributes`` when the span ends):

* ``groundtrace.evidence``: lossless JSON of the documents (by reference when evidence
  capture is off: id, rank, score, version, ``length`` and ``content_hash``, never the
  title, source or metadata), kept within the attribute size limit as valid JSON, plus
  ``groundtrace.evidence.count``;
* the OpenInference document list, ``retrieval.documents.<i>.document.*`` (or
  ``reranker.output_documents.<i>.document.*``): id, score, content and a metadata JSON
  repeating title, source, version, rank, content hash and the item's own metadata;
* for RETRIEVE with capture on, the opt-in ``gen_ai.retrieval.documents``
  (``[{"id":"d1","score":0.5}]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from . import semconv as sc
from ._attributes import NATIVE_JSON_OPTIONS, safe_json
from ._evidence import evidence_fields
from ._record import Recorder, as_sequence, content_hash
from ._settings import Content
from ._step import Step, find_query, record_query

__all__ = ["document_attributes", "list_attributes", "record_evidence"]

_CAPTURE_EVIDENCE: Final = Content.EVIDENCE
_EVIDENCE: Final = sc.GT_EVIDENCE
_EVIDENCE_COUNT: Final = sc.GT_EVIDENCE_COUNT
_GENAI_DOCUMENTS: Final = sc.GENAI_RETRIEVAL_DOCUMENTS
_RERANK: Final = sc.Action.RERANK
_RETRIEVE: Final = sc.Action.RETRIEVE
_dumps: Final = orjson.dumps

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
    entries: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Write the OpenInference document list (id, score, content and metadata of each
    document); returns the documents as ``groundtrace.evidence`` holds them.

    Args:
        rec: the span's recorder (settings; texts are masked and clipped through it).
        items: the returned evidence items (already cut to ``max_evidence_items``).
        prefix: ``retrieval.documents`` or ``reranker.output_documents``.
        capture: whether evidence content is captured.
        entries: receives each document's ``{"id", "score"}`` (``gen_ai.retrieval.documents``).
    """
    settings = rec.settings
    limit = settings.max_attribute_length
    masked = settings.redact is not None
    attrs = rec.attrs
    docs: list[dict[str, Any]] = []
    keys = _document_keys(prefix, len(items))
    rows = [evidence_fields(item, position) for position, item in enumerate(items)]
    # whether masking may change each document's title, source and content, all looked at
    # in one pass (most lists: none of them)
    if masked and capture:
        checks = rec.may_change_each([t or "" for row in rows for t in (row[2], row[3], row[6])])
    else:
        checks = [False] * (3 * len(rows))
    for position, (ev_id, rank, title, source, score, version, content, metadata) in enumerate(
        rows
    ):
        key_id, key_score, key_content, key_meta = keys[position]
        if ev_id is not None:
            attrs[key_id] = ev_id
        doc: dict[str, Any] = {"id": ev_id, "rank": rank}
        meta: dict[str, Any] = {}
        at = 3 * position
        if capture:
            if title is not None:
                doc["title"] = meta["title"] = (
                    rec.text(_EVIDENCE, title) if checks[at] or len(title) > limit else title
                )
            if source is not None:
                doc["source"] = meta["source"] = (
                    rec.text(_EVIDENCE, source) if checks[at + 1] or len(source) > limit else source
                )
        if score is not None:
            doc["score"] = attrs[key_score] = score
        if version is not None:
            doc["version"] = meta["version"] = version
        meta["rank"] = rank
        if content is not None:
            length = doc["length"] = len(content)
            if not capture:
                doc["content_hash"] = meta["content_hash"] = content_hash(content)
            elif checks[at + 2] or length > limit:
                doc["content"] = attrs[key_content] = shown = rec.text(_EVIDENCE, content)
                if shown != content:
                    doc["content_hash"] = meta["content_hash"] = content_hash(content)
            else:
                doc["content"] = attrs[key_content] = content
        if metadata and capture:
            shown_metadata = rec.masked(_EVIDENCE, metadata) if masked else metadata
            doc["metadata"] = shown_metadata
            meta.update(shown_metadata)
        docs.append(doc)
        if entries is not None:
            entries.append({"id": ev_id, "score": score})
        try:
            attrs[key_meta] = _dumps(meta, None, NATIVE_JSON_OPTIONS).decode()
        except TypeError:  # a value orjson leaves to the standard encoder
            attrs[key_meta] = safe_json(meta)
    return docs


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


def list_attributes(
    rec: Recorder,
    docs: list[dict[str, Any]],
    count: int,
    entries: list[dict[str, Any]] | None = None,
) -> None:
    """Write ``groundtrace.evidence`` (of ``docs``), its count and, given ``entries``,
    ``gen_ai.retrieval.documents``."""
    attrs = rec.attrs
    attrs[_EVIDENCE] = _fit(docs, rec)
    attrs[_EVIDENCE_COUNT] = count
    if entries is not None:
        attrs[_GENAI_DOCUMENTS] = safe_json(entries)


def record_evidence(
    rec: Recorder, value: object, action: sc.Action, *, total: int | None = None
) -> None:
    """Record a returned evidence list on a RETRIEVE or RERANK span (see the module docstring).

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
    limit = settings.max_evidence_items
    if count > limit:
        rec.note_truncated(_EVIDENCE)
    items = seq if len(seq) <= limit else seq[:limit]
    capture = settings.captures(_CAPTURE_EVIDENCE)
    prefix = sc.OI_RERANKER_OUTPUT_DOCUMENTS if action is _RERANK else sc.OI_RETRIEVAL_DOCUMENTS
    entries: list[dict[str, Any]] | None = (
        [] if capture and action is _RETRIEVE and settings.genai_latest else None
    )
    docs = document_attributes(rec, items, prefix, capture, entries)
    list_attributes(rec, docs, count, entries)


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
