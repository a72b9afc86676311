"""Answer recording convention for ANSWER steps (and SELECT ids).

An ANSWER step returns a string (the answer), or a mapping/object whose fields are read by
common names: answer text from ``answer``/``text``/``response``/``output``/``final_answer``;
confidence from ``confidence``/``score``/``probability``; cited ids from
``used_chunks``/``cited_ids``/``citations``/``cited``/``sources``/``references``/``used_ids``/
``evidence_ids`` (entries may be ids, or evidence items whose id is read); quoted snippets
from ``quotes``/``quoted``/``snippets``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from . import semconv as sc
from ._attributes import json_list
from ._evidence import evidence_ids
from ._record import Recorder, as_float, as_sequence, field_getter, first_field, text_of
from ._settings import Content
from ._step import Step, arguments_of, find_query, record_query

__all__ = [
    "AnswerFields",
    "answer_inputs",
    "answer_result",
    "normalize_answer",
    "record_answer",
    "record_selected",
    "select_result",
]

_CAPTURE_ANSWER: Final = Content.ANSWER
_CAPTURE_IO: Final = Content.IO
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
_ANSWER_TEXT: Final = sc.GT_ANSWER_TEXT
_CONFIDENCE: Final = sc.GT_ANSWER_CONFIDENCE
_CITED_IDS: Final = sc.GT_ANSWER_CITED_IDS
_QUOTES: Final = sc.GT_ANSWER_QUOTES
_OUTPUT: Final = sc.OI_OUTPUT_VALUE
_OUTPUT_MIME: Final = sc.OI_OUTPUT_MIME_TYPE
_SELECTED_IDS: Final = sc.GT_SELECTED_IDS
_EVIDENCE_COUNT: Final = sc.GT_EVIDENCE_COUNT
#: ``json.dumps(..., ensure_ascii=False)``, built once.
_SPACED_JSON: Final = json.JSONEncoder(ensure_ascii=False)


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
    text, confidence, cited_ids, quotes = _answer_fields(value)
    return AnswerFields(text, confidence, cited_ids, quotes)


def _answer_fields(value: object) -> tuple[str | None, float | None, list[str], list[str]]:
    if value is None:
        return None, None, [], []
    if type(value) is str:
        return value, None, [], []
    if isinstance(value, str | bytes | bytearray):
        return text_of(value), None, [], []
    get = field_getter(value)  # each field: the first of its names holding a value
    text = first_field(get, _TEXT_KEYS)
    cited = first_field(get, _CITED_KEYS)
    quotes = first_field(get, _QUOTE_KEYS)
    confidence = first_field(get, _CONFIDENCE_KEYS)
    return (
        text if text is None or type(text) is str else text_of(text),
        as_float(confidence),
        [cited] if isinstance(cited, str) else evidence_ids(cited),
        _quotes(quotes) if quotes is not None else [],
    )


def record_answer(rec: Recorder, value: object) -> None:
    """Record an answer value: text, confidence, cited ids, quotes (+ ``output.value``)."""
    text, confidence, cited_ids, quotes = _answer_fields(value)
    attrs = rec.attrs
    capture = rec.settings.captures(_CAPTURE_ANSWER)
    if text is not None and capture:
        text = rec.text(_ANSWER_TEXT, text)
        attrs[_ANSWER_TEXT] = text
        attrs[_OUTPUT] = text
        attrs[_OUTPUT_MIME] = "text/plain"
    if confidence is not None:
        attrs[_CONFIDENCE] = confidence
    if cited_ids:
        attrs[_CITED_IDS] = cited_ids
    if quotes and capture:
        attrs[_QUOTES] = [rec.text(_QUOTES, q) for q in quotes]


def record_selected(rec: Recorder, value: object) -> None:
    """Record a SELECT result (evidence items or ids) as ``groundtrace.selected.ids``."""
    limit = rec.settings.max_evidence_items
    if type(value) is list:
        seq: Sequence[Any] = value
    elif isinstance(value, Mapping):
        seq = (value,)
    else:
        seq = as_sequence(value)
    if len(seq) > limit:
        rec.note_truncated(_SELECTED_IDS)
    ids = evidence_ids(seq, limit)
    attrs = rec.attrs
    attrs[_SELECTED_IDS] = ids
    attrs[_EVIDENCE_COUNT] = len(seq)
    attrs[_OUTPUT] = rec.text(_OUTPUT, json_list(ids))
    attrs[_OUTPUT_MIME] = "application/json"


def _jsonable(value: object) -> bool:
    try:
        json.dumps(value)
    except Exception:
        return False
    return True


def answer_inputs(step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """ANSWER: the query and, for a replayable step, the other keyword arguments.

    The keyword arguments are content: recorded (every string in them masked) only with
    ``io`` capture on; a function that takes nothing else always records ``{}``.
    """
    spec = step.spec
    record_query(step, sc.Action.ANSWER, find_query(spec, args, kwargs))
    if spec.replayable:
        if not spec.replay_extra:  # the function takes nothing but the query and the evidence
            step.attrs[sc.GT_REPLAY_KWARGS] = "{}"
            return
        if not step.settings.captures(_CAPTURE_IO):
            return
        skip = spec.replay_skip
        extra = {k: v for k, v in arguments_of(spec, args, kwargs).items() if k not in skip}
        if extra:
            extra = {k: v for k, v in extra.items() if _jsonable(v)}
            if step.settings.redact is not None:
                extra = step.masked(sc.GT_REPLAY_KWARGS, extra)
        step.attrs[sc.GT_REPLAY_KWARGS] = _SPACED_JSON.encode(extra) if extra else "{}"


def select_result(step: Step, result: Any, total: int | None) -> None:
    """SELECT: the returned evidence items or ids (through ``to_evidence`` if given)."""
    to_evidence = step.spec.options.to_evidence
    if to_evidence is not None:
        result = to_evidence(result)
    record_selected(step, result)


def answer_result(step: Step, result: Any, total: int | None) -> None:
    """ANSWER: the returned answer (through ``to_answer`` if given)."""
    to_answer = step.spec.options.to_answer
    if to_answer is not None:
        result = to_answer(result)
    record_answer(step, result)
