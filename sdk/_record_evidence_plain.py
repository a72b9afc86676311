"""The fast path of evidence recording: plain ``dict`` items, no redaction, nothing to clip.

Most retrievers return a list of small dicts with the same keys. For each key set (a tuple of
the dict's keys) a *plan* is computed once: which keys feed which field, in priority order,
and which keys are extra scalar metadata. Recording then builds each document once, without
the intermediate normalised item, and encodes the JSON attributes with ``orjson`` directly
(``groundtrace.evidence`` in one call). Dicts that all share one shape and hold values of the
usual types go through a builder compiled for that shape (``_record_evidence_compiled``)
first; anything it declines takes the loop here. The output is byte-for-byte what the general
path writes; whenever an input needs the general path (nested metadata, a masker, a value to
clip, a value orjson leaves to the standard encoder, a registered mapper) this module declines
(raises or returns False) having written at most flattened keys of the first documents, which
the general path writes again with the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import isfinite as _isfinite
from typing import Any, Final

import orjson

from . import semconv as sc
from ._attributes import NATIVE_JSON_OPTIONS
from ._record import AttributeValue, Recorder, as_float, content_hash, content_id, text_of
from ._record_evidence_compiled import builder_for
from ._record_evidence_keys import META_KEYS, SLOT_KEYS

__all__ = [
    "PRECOMPUTED",
    "DocumentKeys",
    "document_keys",
    "plain_evidence",
    "plain_fields",
    "plan_of",
]

#: A plan: for each field of :data:`SLOT_KEYS` its one key (or a key no dict holds) when no
#: field has two candidate keys, else None; the keys present for each field in priority
#: order; the other string keys (candidate metadata). None when the dict has nested metadata.
_Plan = tuple[tuple[Any, ...] | None, tuple[tuple[str, ...], ...], tuple[str, ...]] | None

_SLOT_OF: Final[dict[str, tuple[int, int]]] = {
    key: (slot, priority)
    for slot, keys in enumerate(SLOT_KEYS)
    for priority, key in enumerate(keys)
}
_META: Final = frozenset(META_KEYS)
_PLANS: dict[tuple[Any, ...], _Plan] = {}
_MAX_PLANS: Final = 256
_UNSEEN: Final[Any] = object()
_NO_KEY: Final[Any] = object()  # looked up for a field no key feeds: never present
_orjson_dumps: Final = orjson.dumps
#: How many documents' keys are built once (per prefix) and shared by every call.
PRECOMPUTED: Final = 128
_EVIDENCE: Final = sc.GT_EVIDENCE
_EVIDENCE_COUNT: Final = sc.GT_EVIDENCE_COUNT
_GENAI_DOCUMENTS: Final = sc.GENAI_RETRIEVAL_DOCUMENTS


def _plan(keys: tuple[Any, ...]) -> _Plan:
    found: list[list[tuple[int, str]]] = [[] for _ in SLOT_KEYS]
    extras: list[str] = []
    for key in keys:
        if key in _META:
            return None
        slot = _SLOT_OF.get(key)
        if slot is not None:
            found[slot[0]].append((slot[1], key))
        elif type(key) is str:
            extras.append(key)
    slots = tuple(tuple(key for _, key in sorted(hits)) for hits in found)
    single = None
    if all(len(names) <= 1 for names in slots):
        single = tuple(names[0] if names else _NO_KEY for names in slots)
    return single, slots, tuple(extras)


def plan_of(keys: tuple[Any, ...]) -> _Plan:
    """The (cached) reading plan of a dict with these keys, in this order."""
    plan: _Plan = _PLANS.get(keys, _UNSEEN)
    if plan is _UNSEEN:
        plan = _plan(keys)
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        _PLANS[keys] = plan
    return plan


def plain_fields(item: dict[Any, Any]) -> tuple[list[Any], dict[str, Any]] | None:
    """Raw field values of a plain dict (in :data:`SLOT_KEYS` order) and its extra scalars.

    Each field is the first non-None value among its names; None when the dict carries
    nested ``metadata``/``meta`` (the general reader looks fields up there too).
    """
    plan = plan_of(tuple(item))
    if plan is None:
        return None
    single, slots, extra_keys = plan
    if single is not None:
        values = list(map(item.get, single))
    else:
        values = []
        for names in slots:
            value = None
            for name in names:
                value = item[name]
                if value is not None:
                    break
            values.append(value)
    extra: dict[str, Any] = {}
    for key in extra_keys:
        value = item[key]
        if value is None or isinstance(value, str | int | float | bool):
            extra[key] = value
    return values, extra


#: Per document: its flattened OpenInference keys (id, score, content, metadata) and its
#: default rank (position + 1).
DocumentKeys = tuple[str, str, str, str, int]


def _document_keys(prefix: str, i: int) -> DocumentKeys:
    return (
        sc.indexed(prefix, i, sc.OI_DOCUMENT_ID),
        sc.indexed(prefix, i, sc.OI_DOCUMENT_SCORE),
        sc.indexed(prefix, i, sc.OI_DOCUMENT_CONTENT),
        sc.indexed(prefix, i, sc.OI_DOCUMENT_METADATA),
        i + 1,
    )


#: The keys of the first documents, built once.
_KEYS: Final = {
    prefix: [_document_keys(prefix, i) for i in range(PRECOMPUTED)]
    for prefix in (sc.OI_RETRIEVAL_DOCUMENTS, sc.OI_RERANKER_OUTPUT_DOCUMENTS)
}


def document_keys(prefix: str, count: int) -> Sequence[DocumentKeys]:
    """The keys of the first ``count`` documents (a longer sequence is fine: zip with it)."""
    table = _KEYS.get(prefix)
    if table is not None and count <= PRECOMPUTED:
        return table
    return [_document_keys(prefix, i) for i in range(count)]


def plain_evidence(
    rec: Recorder,
    items: Sequence[Any],
    prefix: str,
    capture: bool,
    genai: bool,
    count: int,
    *,
    compiled: bool = True,
) -> bool:
    """Write the evidence attributes of ``items`` into ``rec.attrs``; False when the general
    path is needed.

    One pass per document builds every encoding: the ``groundtrace.evidence`` entry, the
    flattened OpenInference keys with their metadata JSON and the ``{id, score}`` entry of
    ``gen_ai.retrieval.documents``. When it returns False (or raises), it has written at most
    flattened keys of the first documents, which the general path writes again, identically,
    in place.

    Args:
        rec: the span's recorder (settings, and the attributes written).
        items: the evidence items, already cut to ``max_evidence_items``.
        prefix: ``retrieval.documents`` or ``reranker.output_documents``.
        capture: whether evidence content is captured.
        genai: whether to write ``gen_ai.retrieval.documents``.
        count: the value of ``groundtrace.evidence.count``.
        compiled: try the builder compiled for the items' shape first (False when the
            caller has just tried it).
    """
    settings = rec.settings
    if settings.redact is not None:
        return False
    limit = settings.max_attribute_length
    table = document_keys(prefix, len(items))
    if compiled and items and type(items[0]) is dict:  # one shape, usual values: compiled
        builder = builder_for(tuple(items[0]), capture, genai, plan_of)
        if builder is not None and builder(rec.attrs, items, table, limit, count):
            return True
    built = _plain_loop(items, table, limit, capture, genai)
    if built is None:
        return False
    out, docs, gen = built
    evidence = _orjson_dumps(docs, None, NATIVE_JSON_OPTIONS).decode()
    if len(evidence) > limit:
        return False
    attrs = rec.attrs
    attrs.update(out)
    attrs[_EVIDENCE] = evidence
    attrs[_EVIDENCE_COUNT] = count
    if genai:
        attrs[_GENAI_DOCUMENTS] = _orjson_dumps(gen, None, NATIVE_JSON_OPTIONS).decode()
    return True


def _plain_loop(
    items: Sequence[Any],
    table: Sequence[DocumentKeys],
    limit: int,
    capture: bool,
    genai: bool,
) -> tuple[dict[str, AttributeValue], list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The flattened attributes, documents and GenAI entries of ``items``; None when an
    item needs the general path."""
    out: dict[str, AttributeValue] = {}
    docs: list[dict[str, Any]] = []
    gen: list[dict[str, Any]] = []
    shape: tuple[Any, ...] | None = None
    single: tuple[Any, ...] | None = None
    extra: dict[str, Any] | None = None
    for item, (k_id, k_score, k_content, k_meta, position) in zip(items, table, strict=False):
        if type(item) is not dict:
            return None
        keys_now = tuple(item)
        if keys_now != shape:  # items usually share one shape: plan once
            shape = keys_now
            plan = plan_of(keys_now)
            if plan is None:
                return None
            single = None if plan[2] else plan[0]  # None: extra keys or two names for a field
            extra = None
        if single is not None:
            raw_id, title, source, raw_rank, raw_score, version, content = map(item.get, single)
        else:
            fields = plain_fields(item)
            if fields is None:
                return None
            (raw_id, title, source, raw_rank, raw_score, version, content), extra = fields
            if not extra:
                extra = None
            elif "content_hash" in extra:
                return None  # would replace the document's own hash in the metadata JSON
        if content is not None and type(content) is not str:
            content = text_of(content)
        if type(raw_id) is str:
            ev_id: str | None = raw_id
        elif raw_id is None:
            ev_id = content_id(content) if content else None
        else:
            ev_id = text_of(raw_id)
        rank = raw_rank if type(raw_rank) is int else position
        # the document and its metadata exactly as the general path builds them
        doc: dict[str, Any] = {"id": ev_id, "rank": rank}
        meta: dict[str, Any] = {}
        if title is not None:
            if type(title) is not str:
                title = text_of(title) or ""
            if len(title) > limit:
                return None
            doc["title"] = meta["title"] = title
        if source is not None:
            doc["source"] = meta["source"] = source if type(source) is str else text_of(source)
        if type(raw_score) is float:
            score = raw_score if _isfinite(raw_score) else None
        else:
            score = as_float(raw_score)
        if score is not None:
            doc["score"] = score
        if version is not None:
            doc["version"] = meta["version"] = version if type(version) is str else text_of(version)
        meta["rank"] = rank
        if content is not None:
            doc["length"] = len(content)
            if capture:
                if len(content) > limit:
                    return None
                doc["content"] = content
            else:
                doc["content_hash"] = meta["content_hash"] = content_hash(content)
        if extra is not None:
            doc["metadata"] = extra
            meta.update(extra)
        docs.append(doc)
        if ev_id is not None:
            out[k_id] = ev_id
        if score is not None:
            out[k_score] = score
        if capture and content is not None:
            out[k_content] = content
        out[k_meta] = _orjson_dumps(meta, None, NATIVE_JSON_OPTIONS).decode()
        if genai:
            gen.append({"id": ev_id, "score": score})
    return out, docs, gen
