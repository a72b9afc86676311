"""Extractors of the groundtrace convention (the lossless ``groundtrace.*`` keys)."""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec

from groundtrace.collectors.model import (
    Evidence,
    FindingKind,
    PromptEvidence,
    ReplayEntrypoint,
    ReplayLink,
)
from groundtrace.sdk import semconv as sc

from ._fields import AnswerFields, LLMFields, RequestFields, ToolFields
from ._messages import messages_from_list
from ._values import SpanView

__all__ = [
    "answer_fields",
    "evidence",
    "llm_fields",
    "prompt_evidence",
    "replay_entrypoint",
    "replay_link",
    "request_fields",
    "tool_call",
]

_EVIDENCE_STR_FIELDS = ("title", "source", "version", "content", "content_hash")


def request_fields(v: SpanView) -> RequestFields:
    """Request fields of a groundtrace REQUEST span."""
    return RequestFields(
        query=v.string(sc.GT_REQUEST_QUERY),
        case_id=v.text(sc.GT_REQUEST_CASE_ID),
        app_name=v.string(sc.GT_APP_NAME),
        app_version=v.text(sc.GT_APP_VERSION),
        session_id=v.text(sc.GT_SESSION_ID),
        user_id=v.text(sc.GT_USER_ID),
        source_id=v.text(sc.GT_SOURCE_ID),
        schema_version=v.string(sc.GT_SCHEMA_VERSION),
    )


isfinite = math.isfinite


def _evidence_item(v: SpanView, raw: Any, index: int, stage: str) -> Evidence | None:
    """One item of a list that is not well typed, with a finding for each field off its type."""
    where = f"{sc.GT_EVIDENCE}[{index}]"
    if isinstance(raw, str):  # a bare string item: content only
        return Evidence(
            id=None, step_span_id=v.span.span_id, stage=stage, rank=index + 1, content=raw
        )
    if not isinstance(raw, dict):
        v.bad(where, "an evidence object", raw)
        return None
    values: dict[str, Any] = {}
    raw_id = raw.get("id")
    if raw_id is not None and not isinstance(raw_id, str | int):
        v.bad(f"{where}.id", "a string", raw_id)
        raw_id = None
    for name in _EVIDENCE_STR_FIELDS:
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            if name == "version" and isinstance(value, int | float):
                value = str(value)
            else:
                v.bad(f"{where}.{name}", "a string", value)
                value = None
        values[name] = value
    for name in ("rank", "length"):
        value = raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            v.bad(f"{where}.{name}", "an integer", value)
            value = None
        values[name] = value
    score = raw.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
    ):
        v.bad(f"{where}.score", "a finite number", score)
        score = None
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        v.bad(f"{where}.metadata", "an object", metadata)
        metadata = None
    return Evidence(
        id=None if raw_id is None else str(raw_id),
        step_span_id=v.span.span_id,
        stage=stage,
        rank=values["rank"] if values["rank"] is not None else index + 1,
        score=None if score is None else float(score),
        title=values["title"],
        source=values["source"],
        version=values["version"],
        content=values["content"],
        content_hash=values["content_hash"],
        length=values["length"],
        metadata=metadata or {},
    )


class _Item(msgspec.Struct, gc=False):
    """One ``groundtrace.evidence`` item whose every field has its documented type."""

    id: str | None = None
    rank: int | None = None
    score: float | None = None
    title: str | None = None
    source: str | None = None
    version: str | None = None
    content: str | None = None
    content_hash: str | None = None
    length: int | None = None
    metadata: dict[str, Any] | None = None


_ITEMS: Final = msgspec.json.Decoder(list[_Item])


def _typed_evidence(raw: str, span_id: str, stage: str) -> list[Evidence] | None:
    """The list decoded and type-checked in one msgspec pass; ``None``: anything off the types."""
    try:
        items = _ITEMS.decode(raw)
    except msgspec.DecodeError:
        return None
    if not all(e.score is None or isfinite(e.score) for e in items):
        return None
    return [
        Evidence(
            e.id,
            span_id,
            stage,
            i if e.rank is None else e.rank,
            e.score,
            e.title,
            e.source,
            e.version,
            e.content,
            e.content_hash,
            e.length,
            e.metadata or {},
        )
        for i, e in enumerate(items, start=1)
    ]


def evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """The evidence list of a RETRIEVE/RERANK span (``None`` when the key is absent).

    Well-typed lists (what the SDK writes) take a typed fast path; anything else is read
    item by item, with a ``bad_attribute_type`` finding for each field off its type.
    """
    raw = v.attrs.get(sc.GT_EVIDENCE)
    if type(raw) is str:
        typed = _typed_evidence(raw, v.span.span_id, stage)
        if typed is not None:
            return typed
    items = v.json_value(sc.GT_EVIDENCE, list)
    if items is None:
        return None
    out = [_evidence_item(v, raw, i, stage) for i, raw in enumerate(items)]
    return [e for e in out if e is not None]


def answer_fields(v: SpanView) -> AnswerFields:
    """Answer text, confidence, citations and quotes of an ANSWER span."""
    confidence = v.number(sc.GT_ANSWER_CONFIDENCE)
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        v.finding(
            FindingKind.CONFIDENCE_OUT_OF_RANGE,
            f"confidence {confidence} is outside [0, 1]",
            sc.GT_ANSWER_CONFIDENCE,
        )
        confidence = None
    return AnswerFields(
        span_id=v.span.span_id,
        answer=v.string(sc.GT_ANSWER_TEXT),
        confidence=confidence,
        cited_ids=v.strings(sc.GT_ANSWER_CITED_IDS),
        quotes=v.strings(sc.GT_ANSWER_QUOTES),
    )


def replay_entrypoint(v: SpanView) -> ReplayEntrypoint | None:
    """The replay entry point recorded on an ANSWER span."""
    entrypoint = v.string(sc.GT_REPLAY_ENTRYPOINT)
    if entrypoint is None:
        return None
    kwargs = v.json_value(sc.GT_REPLAY_KWARGS, dict)
    return ReplayEntrypoint(
        span_id=v.span.span_id,
        entrypoint=entrypoint,
        kwargs=kwargs or {},
        query_param=v.string(sc.GT_REPLAY_QUERY_PARAM),
        evidence_param=v.string(sc.GT_REPLAY_EVIDENCE_PARAM),
    )


def replay_link(v: SpanView) -> ReplayLink | None:
    """The counterfactual link, when this span says the trace replays another."""
    replay_of = v.string(sc.GT_REPLAY_OF)
    if replay_of is None:
        return None
    return ReplayLink(
        replay_of=replay_of,
        operator=v.string(sc.GT_REPLAY_OPERATOR),
        target_id=v.text(sc.GT_REPLAY_TARGET_ID),
        replacement_id=v.text(sc.GT_REPLAY_REPLACEMENT_ID),
    )


def prompt_evidence(v: SpanView) -> PromptEvidence | None:
    """The rendered evidence block, when the span carries one."""
    block = v.string(sc.GT_PROMPT_EVIDENCE_BLOCK)
    if block is None:
        return None
    return PromptEvidence(
        span_id=v.span.span_id,
        block=block,
        ids=v.strings(sc.GT_PROMPT_EVIDENCE_IDS) or (),
        format=v.string(sc.GT_PROMPT_FORMAT),
    )


def tool_call(v: SpanView) -> ToolFields:
    """Tool fields of a groundtrace TOOL span."""
    raw_args = v.string(sc.GT_TOOL_ARGUMENTS)
    return ToolFields(
        name=v.string(sc.GT_TOOL_NAME),
        call_id=v.text(sc.GT_TOOL_CALL_ID),
        arguments=v.json_value(sc.GT_TOOL_ARGUMENTS, dict),
        arguments_raw=raw_args,
        status=v.string(sc.GT_TOOL_STATUS),
        error_type=v.string(sc.GT_TOOL_ERROR_TYPE),
        paths_read=v.strings(sc.GT_TOOL_PATHS_READ),
        result_content=v.string(sc.GT_TOOL_RESULT_CONTENT),
        result_hash=v.string(sc.GT_TOOL_RESULT_HASH),
        result_size=v.integer(sc.GT_TOOL_RESULT_SIZE),
    )


_REQUEST_SKIP = {"model", "messages", "input"}


def llm_fields(v: SpanView) -> LLMFields:
    """LLM fields from the lossless request JSON and the groundtrace LLM keys."""
    base_url, api = v.string(sc.GT_LLM_BASE_URL), v.string(sc.GT_LLM_API)
    stream, output_text = v.boolean(sc.GT_LLM_STREAM), v.string(sc.GT_LLM_OUTPUT_TEXT)
    raw = v.string(sc.GT_LLM_REQUEST)
    request = v.json_value(sc.GT_LLM_REQUEST, dict)
    model = messages = params = None
    if request is not None:
        found = request.get("model")
        model = found if isinstance(found, str) else None
        listed = request.get("messages")
        if listed is None and isinstance(request.get("input"), str):
            listed = [{"role": "user", "content": request["input"]}]
        elif listed is None:
            listed = request.get("input")
        messages = messages_from_list(listed)
        params = {k: val for k, val in request.items() if k not in _REQUEST_SKIP}
    return LLMFields(
        model=model,
        api=api,
        base_url=base_url,
        stream=stream,
        params=params,
        messages=messages,
        output_text=output_text,
        request_json=None if request is None else raw,
    )
