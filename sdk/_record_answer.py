"""Answer recording convention for ANSWER steps (and SELECT ids).

An ANSWER step returns a string (the answer), or a mapping/object whose fields are read by
common names: answer text from ``answer``/``text``/``response``/``output``/``final_answer``;
confidence from ``confidence``/``score``/``probability``; cited ids from
``used_chunks``/``cited_ids``/``citations``/``cited``/``sources``/``references``/``used_ids``/
``evidence_ids`` (entries may be ids, or evidence items whose id is read); quoted snippets
from ``quotes``/``quoted``/``snippets``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from . import semconv as sc
from ._attributes import json_list
from ._record import Recorder, as_float, as_sequence, field_getter, first_field, text_of
from ._record_evidence import evidence_ids

__all__ = ["AnswerFields", "normalize_answer", "record_answer", "record_selected"]

_TEXT_KEYS: Final = ("answer", "text", "response", "output", "final_answer")
_CONFIDENCE_KEYS: Final = ("confidence", "score", "probability")
_CITED_KEYS: Final = (
    "used_chunks",
    "cited_ids",
    "citations",
    "cited",
    "sources",
    "references",
    "used_ids",
    "evidence_ids",
)
_QUOTE_KEYS: Final = ("quotes", "quoted", "snippets")
_QUOTE_TEXT_KEYS: Final = ("quote", "text", "snippet", "content")


@dataclass(slots=True)
class AnswerFields:
    """What an answer value says, normalised (``None`` / empty when absent)."""

    text: str | None = None
    confidence: float | None = None
    cited_ids: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)


def _quotes(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    for item in as_sequence(value):
        if isinstance(item, str):
            out.append(item)
        else:
            text = first_field(field_getter(item), _QUOTE_TEXT_KEYS)
            if text is not None:
                out.append(text_of(text) or "")
    return out


def normalize_answer(value: object) -> AnswerFields:
    """Read an answer value by the conventions above; never raises."""
    if value is None:
        return AnswerFields()
    if isinstance(value, str | bytes | bytearray):
        return AnswerFields(text=text_of(value))
    # a plain dict's own ``get`` reads as field_getter does (absent and None both skip)
    get = value.get if type(value) is dict else field_getter(value)
    text = first_field(get, _TEXT_KEYS)
    cited = first_field(get, _CITED_KEYS)
    quotes = first_field(get, _QUOTE_KEYS)
    return AnswerFields(
        text=text_of(text) if text is not None else None,
        confidence=as_float(first_field(get, _CONFIDENCE_KEYS)),
        cited_ids=[cited] if isinstance(cited, str) else evidence_ids(cited),
        quotes=_quotes(quotes) if quotes is not None else [],
    )


def record_answer(rec: Recorder, value: object) -> None:
    """Record an answer value: text, confidence, cited ids, quotes (+ ``output.value``)."""
    fields = normalize_answer(value)
    attrs = rec.attrs
    capture = rec.settings.captures("answer")
    if fields.text is not None and capture:
        text = rec.text(sc.GT_ANSWER_TEXT, fields.text)
        attrs[sc.GT_ANSWER_TEXT] = text
        attrs[sc.OI_OUTPUT_VALUE] = text
        attrs[sc.OI_OUTPUT_MIME_TYPE] = "text/plain"
    if fields.confidence is not None:
        attrs[sc.GT_ANSWER_CONFIDENCE] = fields.confidence
    if fields.cited_ids:
        attrs[sc.GT_ANSWER_CITED_IDS] = fields.cited_ids
    if fields.quotes and capture:
        attrs[sc.GT_ANSWER_QUOTES] = [rec.text(sc.GT_ANSWER_QUOTES, q) for q in fields.quotes]


def record_selected(rec: Recorder, value: object) -> None:
    """Record a SELECT result (evidence items or ids) as ``groundtrace.selected.ids``."""
    limit = rec.settings.max_evidence_items
    seq = as_sequence(value)
    if isinstance(value, Mapping):
        seq = (value,)
    if len(seq) > limit:
        rec.note_truncated(sc.GT_SELECTED_IDS)
    ids = evidence_ids(seq, limit)
    rec.attrs[sc.GT_SELECTED_IDS] = ids
    rec.attrs[sc.GT_EVIDENCE_COUNT] = len(seq)
    rec.attrs[sc.OI_OUTPUT_VALUE] = rec.text(sc.OI_OUTPUT_VALUE, _json_list(ids))
    rec.attrs[sc.OI_OUTPUT_MIME_TYPE] = "application/json"


def _json_list(ids: list[str]) -> str:
    return json_list(ids)
