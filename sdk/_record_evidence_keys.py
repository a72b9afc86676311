"""Field names read from evidence items, by field, in priority order (see ``_record_evidence``)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONTENT_KEYS",
    "ID_KEYS",
    "KNOWN_KEYS",
    "META_KEYS",
    "OI_META_KEYS",
    "RANK_KEYS",
    "SCORE_KEYS",
    "SLOT_KEYS",
    "SOURCE_KEYS",
    "TITLE_KEYS",
    "VERSION_KEYS",
]

ID_KEYS: Final = ("id", "doc_id", "document_id", "chunk_id", "_id", "key", "uid")
TITLE_KEYS: Final = ("title", "name", "heading")
SOURCE_KEYS: Final = ("source", "path", "url", "uri", "file", "filename")
RANK_KEYS: Final = ("rank", "position")
SCORE_KEYS: Final = ("score", "relevance_score", "similarity", "relevance")
VERSION_KEYS: Final = ("version", "doc_version", "document_version", "revision")
CONTENT_KEYS: Final = ("content", "text", "page_content", "body", "chunk", "passage")
META_KEYS: Final = ("metadata", "meta")
#: The scalar fields in the order the plain-dict reader returns them.
SLOT_KEYS: Final = (
    ID_KEYS,
    TITLE_KEYS,
    SOURCE_KEYS,
    RANK_KEYS,
    SCORE_KEYS,
    VERSION_KEYS,
    CONTENT_KEYS,
)
KNOWN_KEYS: Final = frozenset(
    ID_KEYS
    + TITLE_KEYS
    + SOURCE_KEYS
    + RANK_KEYS
    + SCORE_KEYS
    + VERSION_KEYS
    + CONTENT_KEYS
    + META_KEYS
)
#: Document fields repeated in the OpenInference ``document.metadata`` JSON, in this order.
OI_META_KEYS: Final = ("title", "source", "version", "rank", "content_hash")
