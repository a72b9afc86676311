"""Extractors of OpenInference spans."""

from __future__ import annotations

import json
from typing import Any

from groundtrace.collectors.model import Evidence, Message, RequestedToolCall
from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

from ._fields import LLMFields, RequestFields, ToolFields
from ._flat import indexed_groups
from ._messages import text_and_calls
from ._values import SpanView, json_or_none

__all__ = ["oi_evidence", "oi_llm", "oi_request", "oi_tool"]


def _oi_tool_calls(group: dict[str, AttributeValue]) -> tuple[RequestedToolCall, ...]:
    calls = []
    for _, call in indexed_groups(group, sc.OI_MESSAGE_TOOL_CALLS):
        name = call.get(sc.OI_TOOL_CALL_FUNCTION_NAME)
        call_id = call.get(sc.OI_TOOL_CALL_ID)
        arguments = call.get(sc.OI_TOOL_CALL_FUNCTION_ARGUMENTS)
        calls.append(
            RequestedToolCall(
                call_id if isinstance(call_id, str) else None,
                name if isinstance(name, str) else None,
                arguments if isinstance(arguments, str) else None,
            )
        )
    return tuple(calls)


def _oi_messages(v: SpanView, prefix: str) -> tuple[Message, ...]:
    out = []
    for _, group in v.groups(prefix):
        role = group.get(sc.OI_MESSAGE_ROLE)
        content = group.get(sc.OI_MESSAGE_CONTENT)
        name = group.get(sc.OI_MESSAGE_NAME)
        call_id = group.get(sc.OI_MESSAGE_TOOL_CALL_ID)
        out.append(
            Message(
                role=role if isinstance(role, str) else None,
                content=content if isinstance(content, str) else None,
                name=name if isinstance(name, str) else None,
                tool_call_id=call_id if isinstance(call_id, str) else None,
                tool_calls=_oi_tool_calls(group),
            )
        )
    return tuple(out)


def oi_request(v: SpanView) -> RequestFields:
    """Request fields of an OpenInference root (CHAIN/AGENT) span."""
    return RequestFields(
        query=v.text(sc.OI_INPUT_VALUE),
        session_id=v.text(sc.OI_SESSION_ID),
        user_id=v.text(sc.OI_USER_ID),
        answer=v.text(sc.OI_OUTPUT_VALUE),
    )


def oi_evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """``retrieval.documents.{i}.document.*`` (or reranker output documents) as evidence."""
    prefix = (
        sc.OI_RERANKER_OUTPUT_DOCUMENTS
        if stage == sc.Action.RERANK.value
        else sc.OI_RETRIEVAL_DOCUMENTS
    )
    groups = v.groups(prefix)
    if not groups:
        return None
    out = []
    for rank, (index, doc) in enumerate(groups, start=1):
        key = sc.indexed(prefix, index, "")
        doc_id = doc.get(sc.OI_DOCUMENT_ID)
        content = doc.get(sc.OI_DOCUMENT_CONTENT)
        score = doc.get(sc.OI_DOCUMENT_SCORE)
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            v.bad(key + sc.OI_DOCUMENT_SCORE, "a number", score)
            score = None
        metadata: Any = doc.get(sc.OI_DOCUMENT_METADATA)
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except ValueError:
                v.bad(key + sc.OI_DOCUMENT_METADATA, "JSON object text", metadata)
                metadata = None
        out.append(
            Evidence(
                id=None if doc_id is None else str(doc_id),
                step_span_id=v.span.span_id,
                stage=stage,
                rank=rank,
                score=None if score is None else float(score),
                content=content if isinstance(content, str) else None,
                metadata=metadata if isinstance(metadata, dict) else {},
            )
        )
    return out


def oi_llm(v: SpanView) -> LLMFields:
    """LLM fields of an OpenInference LLM span."""
    outputs = _oi_messages(v, sc.OI_LLM_OUTPUT_MESSAGES)
    output_text, tool_calls = text_and_calls(outputs)
    fields = LLMFields(
        model=v.string(sc.OI_LLM_MODEL_NAME),
        provider=v.string(sc.OI_LLM_PROVIDER) or v.string(sc.OI_LLM_SYSTEM),
        params=v.json_value(sc.OI_LLM_INVOCATION_PARAMETERS, dict),
        messages=_oi_messages(v, sc.OI_LLM_INPUT_MESSAGES),
        output_messages=outputs,
        input_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_PROMPT),
        output_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_COMPLETION),
        total_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_TOTAL),
        output_text=output_text,
        tool_calls=tool_calls,
    )
    raw_input = v.attrs.get(sc.OI_INPUT_VALUE)
    if isinstance(raw_input, str) and raw_input.startswith("{"):
        request = json_or_none(raw_input)
        if isinstance(request, dict) and "model" in request:
            # the request body as the instrumentation saw it
            fields = fields._replace(request_json=raw_input)
    return fields


def oi_tool(v: SpanView) -> ToolFields:
    """Tool fields of an OpenInference TOOL span (arguments from ``input.value`` JSON)."""
    raw_args = v.attrs.get(sc.OI_INPUT_VALUE)
    decoded = json_or_none(raw_args)
    return ToolFields(
        name=v.string(sc.OI_TOOL_NAME),
        call_id=v.text(sc.OI_TOOL_ID),
        arguments=decoded if isinstance(decoded, dict) else None,
        arguments_raw=raw_args if isinstance(raw_args, str) else None,
        result_content=v.text(sc.OI_OUTPUT_VALUE),
    )
