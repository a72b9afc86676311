"""Extractors of OpenInference spans."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from groundtrace.collectors.model import Evidence, Message, RequestedToolCall
from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

from ._documents import document_id, documents_evidence, evidence_item, number_or_none
from ._fields import LLMFields, RequestFields, ToolFields
from ._flat import indexed_groups
from ._messages import text_and_calls
from ._values import SpanView, json_or_none, query_in

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


def _root_query(v: SpanView) -> str | None:
    """``input.value`` of the root: its text, or the ``query`` / ``question`` / ``input`` of a
    JSON object input (a chain invoked with a dict), or a JSON string un-quoted."""
    text = v.text(sc.OI_INPUT_VALUE)
    if text is None or not text.startswith(("{", '"')):
        return text
    decoded = json_or_none(text)
    if isinstance(decoded, str):
        return decoded
    return query_in(decoded) or text


def oi_request(v: SpanView) -> RequestFields:
    """Request fields of an OpenInference root (CHAIN/AGENT) span."""
    return RequestFields(
        query=_root_query(v),
        session_id=v.text(sc.OI_SESSION_ID),
        user_id=v.text(sc.OI_USER_ID),
        answer=v.text(sc.OI_OUTPUT_VALUE),
    )


def _flat_evidence(
    v: SpanView, prefix: str, groups: list[tuple[int, dict[str, AttributeValue]]], stage: str
) -> list[Evidence]:
    """Evidence from flattened ``{prefix}.{i}.document.*`` groups."""
    out = []
    for rank, (index, doc) in enumerate(groups, start=1):
        key = sc.indexed(prefix, index, "")
        doc_id = doc.get(sc.OI_DOCUMENT_ID)
        content = doc.get(sc.OI_DOCUMENT_CONTENT)
        score = number_or_none(v, key + sc.OI_DOCUMENT_SCORE, doc.get(sc.OI_DOCUMENT_SCORE))
        metadata: Any = doc.get(sc.OI_DOCUMENT_METADATA)
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except ValueError:
                v.bad(key + sc.OI_DOCUMENT_METADATA, "JSON object text", metadata)
                metadata = None
        out.append(evidence_item(v, stage, rank, doc_id, content, score, metadata))
    return out


def _output_documents(v: SpanView) -> list[Any] | None:
    """The documents of ``output.value``: a JSON list, or an object with a ``documents`` list.

    ``None`` when the span has no ``output.value``; a ``bad_attribute_type`` finding when it
    holds something else.
    """
    raw = v.attrs.get(sc.OI_OUTPUT_VALUE)
    if raw is None:
        return None
    decoded = json_or_none(raw)
    if isinstance(decoded, dict):
        decoded = decoded.get("documents")
    if isinstance(decoded, list):
        return decoded
    v.bad(sc.OI_OUTPUT_VALUE, 'a JSON list of documents or {"documents": [...]}', raw)
    return None


def oi_evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """The documents of a RETRIEVER (or RERANKER) span as evidence.

    Read from ``retrieval.documents.{i}.document.*`` (``reranker.output_documents`` for a
    reranker) or, when those are absent, from ``output.value`` (what OpenInference's
    ``@tracer.retriever`` writes). LangChain's instrumentor writes both, the ids only in
    ``output.value``: a flattened document without an id takes the id of the
    ``output.value`` document of the same rank when both lists have the same length.
    """
    prefix = (
        sc.OI_RERANKER_OUTPUT_DOCUMENTS
        if stage == sc.Action.RERANK.value
        else sc.OI_RETRIEVAL_DOCUMENTS
    )
    groups = v.groups(prefix)
    if not groups:
        docs = _output_documents(v)
        return None if docs is None else documents_evidence(v, docs, sc.OI_OUTPUT_VALUE, stage)
    flat = _flat_evidence(v, prefix, groups, stage)
    if any(e.id is None for e in flat) and sc.OI_OUTPUT_VALUE in v.attrs:
        decoded = json_or_none(v.attrs[sc.OI_OUTPUT_VALUE])
        docs = decoded.get("documents") if isinstance(decoded, dict) else decoded
        if isinstance(docs, list) and len(docs) == len(flat):
            ids = [document_id(d) for d in docs]
            flat = [
                e if e.id is not None or i is None else msgspec.structs.replace(e, id=str(i))
                for e, i in zip(flat, ids, strict=True)
            ]
    return flat


def _params(v: SpanView) -> dict[str, Any] | None:
    """``llm.invocation_parameters``, with the tools offered (``llm.tools.{i}.tool.json_schema``)
    as ``tools`` when the parameters do not list them."""
    params: dict[str, Any] | None = v.json_value(sc.OI_LLM_INVOCATION_PARAMETERS, dict)
    tools = []
    for index, group in v.groups(sc.OI_LLM_TOOLS):
        key = sc.indexed(sc.OI_LLM_TOOLS, index, sc.OI_TOOL_JSON_SCHEMA)
        schema = group.get(sc.OI_TOOL_JSON_SCHEMA)
        decoded = json_or_none(schema)
        if isinstance(decoded, dict):
            tools.append(decoded)
        elif schema is not None:
            v.bad(key, "JSON object text", schema)
    if not tools or (params is not None and "tools" in params):
        return params
    return {**(params or {}), "tools": tools}


def _finish_reasons(v: SpanView) -> tuple[str, ...] | None:
    """``llm.finish_reason`` (OpenInference records the first choice's only)."""
    reason = v.string(sc.OI_LLM_FINISH_REASON)
    return None if reason is None else (reason,)


def oi_llm(v: SpanView) -> LLMFields:
    """LLM fields of an OpenInference LLM span."""
    outputs = _oi_messages(v, sc.OI_LLM_OUTPUT_MESSAGES)
    output_text, tool_calls = text_and_calls(outputs)
    fields = LLMFields(
        model=v.string(sc.OI_LLM_MODEL_NAME),
        provider=v.string(sc.OI_LLM_PROVIDER) or v.string(sc.OI_LLM_SYSTEM),
        params=_params(v),
        messages=_oi_messages(v, sc.OI_LLM_INPUT_MESSAGES),
        output_messages=outputs,
        input_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_PROMPT),
        output_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_COMPLETION),
        total_tokens=v.integer(sc.OI_LLM_TOKEN_COUNT_TOTAL),
        finish_reasons=_finish_reasons(v),
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
