"""Evidence normalisation: what a RETRIEVE / RERANK / SELECT step returned, as evidence items.

A step returns a list of evidence items; each item may be a mapping, an object, a string, or
a ``(item, score)`` pair. Fields are read by common names (for each field the first name
holding a value other than None wins):

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

The other string keys of a mapping holding scalars (str, int, float, bool, None) are its
metadata too. A string is its own content and gets ``id = content_id(text)``; an item
without an id gets the id of its content. Custom types are mapped by a per-step
``to_evidence`` hook (applied to the whole return value) or by a mapper registered for the
item type with :func:`register_evidence_mapper`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from ._record import as_float, as_sequence, content_id, field_getter, first_field, text_of
from ._runtime import logger

__all__ = [
    "EvidenceFields",
    "EvidenceItem",
    "EvidenceMapper",
    "evidence_fields",
    "evidence_ids",
    "normalize_evidence",
    "normalize_item",
    "register_evidence_mapper",
    "unregister_evidence_mapper",
]

#: Maps one custom evidence item to a mapping (or a string) read by the conventions above.
EvidenceMapper = Callable[[Any], Any]

#: The names of each field, in priority order (the order of :class:`EvidenceItem`'s fields).
_FIELD_NAMES: Final = (
    ("id", "doc_id", "document_id", "chunk_id", "_id", "key", "uid"),
    ("title", "name", "heading"),
    ("source", "path", "url", "uri", "file", "filename"),
    ("rank", "position"),
    ("score", "relevance_score", "similarity", "relevance"),
    ("version", "doc_version", "document_version", "revision"),
    ("content", "text", "page_content", "body", "chunk", "passage"),
    ("metadata", "meta"),
)
_COUNT: Final = len(_FIELD_NAMES)
_ID, _TITLE, _SOURCE, _RANK, _SCORE, _VERSION, _CONTENT, _META = range(_COUNT)
#: The fields also looked up in an item's nested metadata.
_FROM_METADATA: Final = (_ID, _TITLE, _SOURCE, _VERSION)
#: Field name -> field: one lookup per key of a mapping.
_FIELD_OF: Final[dict[str, int]] = {
    name: slot for slot, names in enumerate(_FIELD_NAMES) for name in names
}
#: The first name of each field: a mapping with no other key (most) is read by these alone.
_FIRST_NAMES: Final = tuple(names[0] for names in _FIELD_NAMES)
_FIRST_NAME_SET: Final = frozenset(_FIRST_NAMES)

_TEXTS: Final = (str, bytes, bytearray)
_SCALARS: Final = (str, int, float)  # and bool, an int

_MAPPERS: dict[type, EvidenceMapper] = {}


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


def _mapped(item: object) -> object:
    for klass in type(item).__mro__:
        mapper = _MAPPERS.get(klass)
        if mapper is not None:
            try:
                return mapper(item)
            except Exception:
                logger.debug("evidence mapper failed for %s", type(item), exc_info=True)
                return item
    return item


class EvidenceItem(msgspec.Struct, gc=False):
    """One evidence item after normalisation (the full content, before any capture policy)."""

    id: str | None
    rank: int
    title: str | None = None
    source: str | None = None
    score: float | None = None
    version: str | None = None
    content: str | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


def _object_fields(item: object) -> list[Any]:
    """The raw field values of an object, read from its attributes."""
    get = field_getter(item)
    return [first_field(get, names) for names in _FIELD_NAMES]


#: The fields of :class:`EvidenceItem`, in order, as a tuple (what the span attributes read).
EvidenceFields = tuple[
    str | None, int, str | None, str | None, float | None, str | None, str | None, dict[str, Any]
]


def evidence_fields(item: object, position: int) -> EvidenceFields:
    """Normalise one returned item (at ``position`` in its list) into the fields of an
    :class:`EvidenceItem`; never raises (unreadable fields are left empty)."""
    if _MAPPERS:
        item = _mapped(item)
    pair_score: float | None = None
    if type(item) is not dict:
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], numbers.Number):
            pair_score = as_float(item[1])
            if pair_score is not None:
                item = item[0]
        if isinstance(item, _TEXTS):
            text = text_of(item) or ""
            return content_id(text), position + 1, None, None, pair_score, None, text, {}
    if type(item) is dict or isinstance(item, Mapping):
        try:
            get = item.get
            values: list[Any] = [  # by the first name of each field (_FIRST_NAMES)
                get("id"),
                get("title"),
                get("source"),
                get("rank"),
                get("score"),
                get("version"),
                get("content"),
                get("metadata"),
            ]
            metadata: dict[str, Any] = (
                {} if _FIRST_NAME_SET.issuperset(item) else _other_keys(item, values)
            )
        except Exception:
            logger.debug("unreadable evidence mapping", exc_info=True)
            values, metadata = [None] * _COUNT, {}
    else:
        values, metadata = _object_fields(item), {}
    ev_id, title, source, rank, score, version, content, nested = values
    if nested is not None and isinstance(nested, Mapping):
        metadata, ev_id, title, source, version = _with_nested(nested, metadata, values)
    if type(content) is not str and content is not None:
        content = text_of(content)
    if ev_id is None:
        ev_id = content_id(content) if content else None
    elif type(ev_id) is not str:
        ev_id = text_of(ev_id)
    if rank is None:
        rank = position + 1
    elif type(rank) is not int:  # a bool is not a rank; another integral number is
        integral = type(rank) is not bool and isinstance(rank, numbers.Integral)
        rank = int(rank) if integral else position + 1
    if type(score) is not float:
        score = as_float(score) if score is not None else None
    elif score - score != 0:  # not finite
        score = None
    return (
        ev_id,
        rank,
        title if type(title) is str or title is None else text_of(title),
        source if type(source) is str or source is None else text_of(source),
        score if score is not None else pair_score,
        version if type(version) is str or version is None else text_of(version),
        content,
        metadata,
    )


def _other_keys(item: Mapping[Any, Any], values: list[Any]) -> dict[str, Any]:
    """Read the keys of ``item`` other than the first names of the fields into ``values``
    (another name of a field, used when its first name holds None; the first name in
    priority order wins when two names hold values); returns the metadata, the other string
    keys holding scalars, in the item's order."""
    metadata: dict[str, Any] = {}
    field_of = _FIELD_OF.get
    ambiguous = False
    for key, value in item.items():
        if key in _FIRST_NAME_SET:
            continue
        slot = field_of(key)
        if slot is not None:
            if values[slot] is None:
                values[slot] = value
            elif value is not None:
                ambiguous = True  # two names of one field hold values
        elif isinstance(key, str) and (value is None or isinstance(value, _SCALARS)):
            metadata[key] = value
    if ambiguous:
        get = field_getter(item)
        values[:] = [first_field(get, names) for names in _FIELD_NAMES]
    return metadata


def _with_nested(
    nested: Mapping[Any, Any], extra: dict[str, Any], values: list[Any]
) -> tuple[dict[str, Any], Any, Any, Any, Any]:
    """The metadata of an item with nested metadata (which wins over its other keys), and
    its id, title, source and version, looked up there when the item has none."""
    try:
        metadata = {str(k): v for k, v in nested.items()}
    except Exception:
        logger.debug("unreadable evidence metadata", exc_info=True)
        metadata = extra
    else:
        for key, value in extra.items():
            metadata.setdefault(key, value)
        for slot in _FROM_METADATA:
            if values[slot] is None:
                values[slot] = first_field(metadata.get, _FIELD_NAMES[slot])
    return metadata, values[_ID], values[_TITLE], values[_SOURCE], values[_VERSION]


def normalize_item(item: object, position: int) -> EvidenceItem:
    """Normalise one returned item; never raises (unreadable fields are left empty)."""
    return EvidenceItem(*evidence_fields(item, position))


def normalize_evidence(value: object, limit: int | None = None) -> list[EvidenceItem]:
    """Normalise a returned evidence collection (first ``limit`` items)."""
    items = as_sequence(value)
    if limit is not None and len(items) > limit:
        items = items[:limit]
    return [EvidenceItem(*evidence_fields(item, i)) for i, item in enumerate(items)]


def evidence_ids(value: object, limit: int | None = None) -> list[str]:
    """Ids of a list of evidence items or plain ids (strings and ints are taken as ids)."""
    items: Sequence[Any] = as_sequence(value)
    if limit is not None and len(items) > limit:
        items = items[:limit]
    ids: list[str] = []
    for i, item in enumerate(items):
        if type(item) is dict and not _MAPPERS and type(item.get("id")) is str:
            ids.append(item["id"])  # the first of the id names holds it: the item's id
        elif isinstance(item, str):
            ids.append(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            ids.append(str(item))
        else:
            ev_id = evidence_fields(item, i)[0]
            if ev_id is not None:
                ids.append(ev_id)
    return ids
