"""Evidence recording convention for RETRIEVE / RERANK / SELECT steps.

A step returns a list of evidence items; each item may be a mapping, an object, a string, or
a ``(item, score)`` pair. Fields are read by common names:

=========  ===============================================================
id         ``id``, ``doc_id``, ``document_id``, ``chunk_id``, ``_id``, ``key``, ``uid``
title      ``title``, ``name``, ``heading``
source     ``source``, ``path``, ``url``, ``uri``, ``file``, ``filename``
rank       ``rank``, ``position`` (default: position in the list + 1)
score      ``score``, ``relevance_score``, ``similarity``, ``relevance``
version    ``version``, ``doc_version``, ``document_version``, ``revision``
content    ``content``, ``text``, ``page_content``, ``body``, ``chunk``, ``passage``
metadata   ``metadata``, ``meta`` (id/title/source/version are also looked up there)
=========  ===============================================================

A string is its own content and gets ``id = content_id(text)``. Custom types are mapped by a
per-step ``to_evidence`` hook (applied to the whole return value) or by a mapper registered
for the item type with :func:`register_evidence_mapper`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from . import _record_evidence_keys as keys
from . import semconv as sc
from ._attributes import safe_json
from ._record import (
    Recorder,
    as_float,
    as_sequence,
    content_hash,
    content_id,
    field_getter,
    first_field,
    text_of,
)
from ._record_evidence_compiled import Builder, builder_for
from ._record_evidence_plain import (
    PRECOMPUTED,
    DocumentKeys,
    document_keys,
    plain_evidence,
    plain_fields,
    plan_of,
)
from ._runtime import Settings, logger

__all__ = [
    "MAPPERS",
    "CompiledPlan",
    "EvidenceItem",
    "EvidenceMapper",
    "compiled_plan",
    "evidence_ids",
    "normalize_evidence",
    "normalize_item",
    "record_evidence",
    "register_evidence_mapper",
    "unregister_evidence_mapper",
]

#: Maps one custom evidence item to a mapping (or a string) read by the conventions above.
EvidenceMapper = Callable[[Any], Any]

_ID_KEYS: Final = keys.ID_KEYS
_FIRST_ID_KEY: Final = keys.ID_KEYS[0]
_TITLE_KEYS: Final = keys.TITLE_KEYS
_SOURCE_KEYS: Final = keys.SOURCE_KEYS
_RANK_KEYS: Final = keys.RANK_KEYS
_SCORE_KEYS: Final = keys.SCORE_KEYS
_VERSION_KEYS: Final = keys.VERSION_KEYS
_CONTENT_KEYS: Final = keys.CONTENT_KEYS
_META_KEYS: Final = keys.META_KEYS
_KNOWN_KEYS: Final = keys.KNOWN_KEYS
_OI_META_KEYS: Final = keys.OI_META_KEYS

_RETRIEVE: Final = sc.Action.RETRIEVE
_RERANK: Final = sc.Action.RERANK
_EVIDENCE: Final = sc.GT_EVIDENCE
_RETRIEVED_DOCUMENTS: Final = sc.OI_RETRIEVAL_DOCUMENTS
_RERANKED_DOCUMENTS: Final = sc.OI_RERANKER_OUTPUT_DOCUMENTS
_RETRIEVED_KEYS: Final = document_keys(_RETRIEVED_DOCUMENTS, PRECOMPUTED)
_RERANKED_KEYS: Final = document_keys(_RERANKED_DOCUMENTS, PRECOMPUTED)

_MAPPERS: dict[type, EvidenceMapper] = {}
#: The registered mappers (read-only outside this module): none registered, plain dicts can
#: take the compiled builders.
MAPPERS: Final = _MAPPERS


def register_evidence_mapper(item_type: type, mapper: EvidenceMapper) -> None:
    """Register how items of ``item_type`` (and its subclasses) become evidence.

    Args:
        item_type: the class of the items a step returns.
        mapper: called with one item; returns a mapping with the conventional field names
            (``id``, ``title``, ``content``, ...) or a string.
    """
    _MAPPERS[item_type] = mapper


def unregister_evidence_mapper(item_type: type) -> None:
    """Remove the mapper registered for ``item_type`` (no error when there is none)."""
    _MAPPERS.pop(item_type, None)


def _mapper_for(item: object) -> EvidenceMapper | None:
    for klass in type(item).__mro__:
        mapper = _MAPPERS.get(klass)
        if mapper is not None:
            return mapper
    return None


@dataclass(slots=True)
class EvidenceItem:
    """One evidence item after normalisation (the full content, before any capture policy)."""

    id: str | None
    rank: int
    title: str | None = None
    source: str | None = None
    score: float | None = None
    version: str | None = None
    content: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _plain_dict(item: dict[Any, Any], position: int) -> EvidenceItem | None:
    """Plain dicts without nested metadata (the common, hot case): read by a cached plan."""
    fields = plain_fields(item)
    if fields is None:
        return None  # nested metadata may carry id/title/source: take the general path
    (raw_id, title, source, rank_raw, score, version, raw_content), extra = fields
    content = text_of(raw_content)
    return EvidenceItem(
        id=text_of(raw_id) if raw_id is not None else (content_id(content) if content else None),
        rank=rank_raw if type(rank_raw) is int else position + 1,
        title=text_of(title),
        source=text_of(source),
        score=as_float(score),
        version=text_of(version),
        content=content,
        metadata=extra,
    )


def normalize_item(item: object, position: int) -> EvidenceItem:
    """Normalise one returned item; never raises (unreadable fields are left empty)."""
    if type(item) is dict and not _MAPPERS:
        try:
            fast = _plain_dict(item, position)
        except Exception:
            fast = None
        if fast is not None:
            return fast
    if _MAPPERS:
        mapper = _mapper_for(item)
        if mapper is not None:
            try:
                item = mapper(item)
            except Exception:
                logger.debug("evidence mapper failed for %s", type(item), exc_info=True)
    pair_score: float | None = None
    if (
        isinstance(item, tuple)
        and len(item) == 2
        and not isinstance(item[0], numbers.Number)
        and as_float(item[1]) is not None
    ):
        pair: tuple[Any, Any] = item
        item, pair_score = pair[0], as_float(pair[1])
    if isinstance(item, str | bytes | bytearray):
        text = text_of(item) or ""
        return EvidenceItem(id=content_id(text), rank=position + 1, content=text, score=pair_score)
    get = field_getter(item)
    meta_raw = first_field(get, _META_KEYS)
    metadata: dict[str, Any] = {}
    if isinstance(meta_raw, Mapping):
        try:
            metadata = {str(k): v for k, v in meta_raw.items()}
        except Exception:
            logger.debug("unreadable evidence metadata", exc_info=True)
    if isinstance(item, Mapping):
        try:
            for key, value in item.items():
                if key not in _KNOWN_KEYS and isinstance(key, str) and _scalar(value):
                    metadata.setdefault(key, value)
        except Exception:
            logger.debug("unreadable evidence mapping", exc_info=True)
    meta_get = metadata.get

    def pick(names: Sequence[str]) -> object:
        value = first_field(get, names)
        if value is None and metadata:
            for name in names:
                value = meta_get(name)
                if value is not None:
                    break
        return value

    content = text_of(first_field(get, _CONTENT_KEYS))
    raw_id = pick(_ID_KEYS)
    rank_raw = first_field(get, _RANK_KEYS)
    rank = (
        int(rank_raw)
        if isinstance(rank_raw, int | numbers.Integral)
        and rank_raw is not True
        and rank_raw is not False
        else position + 1
    )
    score = as_float(first_field(get, _SCORE_KEYS))
    return EvidenceItem(
        id=text_of(raw_id) if raw_id is not None else (content_id(content) if content else None),
        rank=rank,
        title=text_of(pick(_TITLE_KEYS)),
        source=text_of(pick(_SOURCE_KEYS)),
        score=score if score is not None else pair_score,
        version=text_of(pick(_VERSION_KEYS)),
        content=content,
        metadata=metadata,
    )


def normalize_evidence(value: object, limit: int | None = None) -> list[EvidenceItem]:
    """Normalise a returned evidence collection (first ``limit`` items)."""
    items = as_sequence(value)
    if limit is not None and len(items) > limit:
        items = items[:limit]
    return [normalize_item(item, i) for i, item in enumerate(items)]


def evidence_ids(value: object, limit: int | None = None) -> list[str]:
    """Ids of a list of evidence items or plain ids (strings are taken as ids here)."""
    ids: list[str] = []
    plain = not _MAPPERS
    for i, item in enumerate(value if type(value) is list else as_sequence(value)):
        if limit is not None and i >= limit:
            break
        kind = type(item)
        if kind is dict and plain:
            # the first of the id names holds the id whenever it holds a string
            raw_id = item.get(_FIRST_ID_KEY)
            if type(raw_id) is str:
                ids.append(raw_id)
                continue
            ev_id = _plain_id(item)
            if ev_id is _NO_ID:
                ev_id = normalize_item(item, i).id
        elif kind is str or isinstance(item, str):
            ids.append(item)
            continue
        elif isinstance(item, int) and not isinstance(item, bool):
            ids.append(str(item))
            continue
        else:
            ev_id = normalize_item(item, i).id
        if ev_id is not None:
            ids.append(ev_id)
    return ids


_NO_ID: Final[Any] = object()


def _plain_id(item: dict[Any, Any]) -> str | Any | None:
    """The id :func:`normalize_item` gives a plain dict, without building the item."""
    try:
        plan = plan_of(tuple(item))
        if plan is None:
            return _NO_ID  # nested metadata: the general reader looks there too
        single = plan[0]
        if single is not None:  # one name per field: read the id (or content) directly
            raw_id = item.get(single[0])
            content = None if raw_id is not None else item.get(single[6])
        else:
            fields = plain_fields(item)
            if fields is None:
                return _NO_ID
            raw_id, content = fields[0][0], fields[0][6]
    except Exception:
        return _NO_ID
    if raw_id is not None:
        return raw_id if type(raw_id) is str else text_of(raw_id)
    text = text_of(content)
    return content_id(text) if text else None


def _doc_dict(ev: EvidenceItem, rec: Recorder, capture: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": ev.id, "rank": ev.rank}
    if ev.title is not None:
        doc["title"] = rec.text(sc.GT_EVIDENCE, ev.title)
    if ev.source is not None:
        doc["source"] = ev.source
    if ev.score is not None:
        doc["score"] = ev.score
    if ev.version is not None:
        doc["version"] = ev.version
    if ev.content is not None:
        doc["length"] = len(ev.content)
        if capture:
            shown = rec.text(sc.GT_EVIDENCE, ev.content)
            doc["content"] = shown
            if shown != ev.content:
                doc["content_hash"] = content_hash(ev.content)
        else:
            doc["content_hash"] = content_hash(ev.content)
    if ev.metadata:
        doc["metadata"] = ev.metadata
    return doc


def _fit(docs: list[dict[str, Any]], rec: Recorder) -> str:
    """JSON of ``docs`` within the attribute size limit, staying valid JSON."""
    text = safe_json(docs)
    limit = rec.settings.max_attribute_length
    if len(text) <= limit:
        return text
    rec.note_truncated(sc.GT_EVIDENCE)
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


#: What a step caches to record its evidence with a compiled builder under one settings
#: object: ``(settings, builder or None, key table, max_attribute_length, most items)``.
CompiledPlan = tuple[Settings, Builder | None, Sequence[DocumentKeys], int, int]


def compiled_plan(settings: Settings, action: sc.Action, first: object) -> CompiledPlan:
    """How a step records, under ``settings``, lists of dicts shaped like ``first``.

    The builder is None when these settings or that item need another path (a masker, an
    item that is not a dict, a shape that is not compiled). A builder given items of another
    shape declines at the first item, before writing anything.
    """
    builder: Builder | None = None
    if settings.redact is None and type(first) is dict:
        capture = "evidence" in settings.capture
        genai = capture and action is _RETRIEVE
        builder = builder_for(tuple(first), capture, genai, plan_of)
    table = _RERANKED_KEYS if action is _RERANK else _RETRIEVED_KEYS
    most = min(settings.max_evidence_items, PRECOMPUTED)
    return settings, builder, table, settings.max_attribute_length, most


def record_evidence(
    rec: Recorder,
    value: object,
    action: sc.Action,
    *,
    total: int | None = None,
    compiled: bool = True,
) -> None:
    """Record a returned evidence list on a RETRIEVE or RERANK span.

    Writes ``groundtrace.evidence`` (lossless JSON; by reference when evidence content
    capture is off), ``groundtrace.evidence.count``, the OpenInference document list
    (``retrieval.documents.*`` or ``reranker.output_documents.*``) and, for RETRIEVE with
    capture on, the opt-in ``gen_ai.retrieval.documents`` (compact JSON:
    ``[{"id":"d1","score":0.5}]``). A list of plain dicts is first offered to the builder
    compiled for its shape, unless ``compiled`` is False (the caller has just offered it).
    """
    settings = rec.settings
    seq = value if type(value) is list else as_sequence(value)
    count = len(seq) if total is None else total
    limit = settings.max_evidence_items
    if count > limit:
        rec.note_truncated(_EVIDENCE)
    capture = "evidence" in settings.capture
    prefix = _RERANKED_DOCUMENTS if action is _RERANK else _RETRIEVED_DOCUMENTS
    attrs = rec.attrs
    genai = capture and action is _RETRIEVE
    if not _MAPPERS:
        try:
            head = seq if len(seq) <= limit else seq[:limit]
            if plain_evidence(rec, head, prefix, capture, genai, count, compiled=compiled):
                return
        except Exception:
            logger.debug("fast evidence path failed; using the general one", exc_info=True)
    items = normalize_evidence(seq, limit)
    docs: list[dict[str, Any]] = []
    for i, ev in enumerate(items):
        doc = _doc_dict(ev, rec, capture)
        docs.append(doc)
        if ev.id is not None:
            attrs[sc.indexed(prefix, i, sc.OI_DOCUMENT_ID)] = ev.id
        if ev.score is not None:
            attrs[sc.indexed(prefix, i, sc.OI_DOCUMENT_SCORE)] = ev.score
        if "content" in doc:
            attrs[sc.indexed(prefix, i, sc.OI_DOCUMENT_CONTENT)] = doc["content"]
        meta: dict[str, Any] = {k: doc[k] for k in _OI_META_KEYS if k in doc}
        if ev.metadata:
            meta.update(ev.metadata)
        attrs[sc.indexed(prefix, i, sc.OI_DOCUMENT_METADATA)] = safe_json(meta)
    attrs[sc.GT_EVIDENCE] = _fit(docs, rec)
    attrs[sc.GT_EVIDENCE_COUNT] = count
    if genai:
        attrs[sc.GENAI_RETRIEVAL_DOCUMENTS] = safe_json(
            [{"id": d["id"], "score": d.get("score")} for d in docs]
        )
