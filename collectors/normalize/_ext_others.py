"""Extractors of OpenInference, OTel GenAI and OpenLLMetry/Traceloop spans."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from groundtrace.collectors.model import Evidence, Message, RequestedToolCall
from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

from ._fields import LLMFields, RequestFields, ToolFields
from ._flat import indexed_groups
from ._messages import as_text, message_from_obj, messages_from_list
from ._values import SpanView

__all__ = [
    "TRACELOOP_LLM_KEYS",
    "genai_evidence",
    "genai_llm",
    "genai_tool",
    "oi_evidence",
    "oi_llm",
    "oi_request",
    "oi_tool",
    "traceloop_llm",
    "traceloop_request",
    "traceloop_tool",
]


# --- OpenInference ---------------------------------------------------------------------------


def _json_or_none(raw: object) -> Any:
    """``raw`` decoded as JSON, or ``None`` when it is not a string of valid JSON."""
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


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
    output_text, tool_calls = _outputs(outputs)
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
        request = _json_or_none(raw_input)
        if isinstance(request, dict) and "model" in request:
            # the request body as the instrumentation saw it
            fields = fields._replace(request_json=raw_input)
    return fields


def _outputs(
    outputs: Sequence[Message],
) -> tuple[str | None, tuple[RequestedToolCall, ...] | None]:
    """``output_text`` and ``tool_calls`` of an LLM call, from its output messages."""
    if not outputs:
        return None, None
    return outputs[0].content, tuple(c for m in outputs for c in m.tool_calls)


def oi_tool(v: SpanView) -> ToolFields:
    """Tool fields of an OpenInference TOOL span (arguments from ``input.value`` JSON)."""
    raw_args = v.attrs.get(sc.OI_INPUT_VALUE)
    decoded = _json_or_none(raw_args)
    return ToolFields(
        name=v.string(sc.OI_TOOL_NAME),
        call_id=v.text(sc.OI_TOOL_ID),
        arguments=decoded if isinstance(decoded, dict) else None,
        arguments_raw=raw_args if isinstance(raw_args, str) else None,
        result_content=v.text(sc.OI_OUTPUT_VALUE),
    )


# --- OTel GenAI ------------------------------------------------------------------------------

_GENAI_PARAMS = {
    sc.GENAI_REQUEST_TEMPERATURE: "temperature",
    sc.GENAI_REQUEST_TOP_P: "top_p",
    sc.GENAI_REQUEST_MAX_TOKENS: "max_tokens",
    sc.GENAI_REQUEST_SEED: "seed",
    sc.GENAI_REQUEST_STOP_SEQUENCES: "stop",
    sc.GENAI_REQUEST_FREQUENCY_PENALTY: "frequency_penalty",
    sc.GENAI_REQUEST_PRESENCE_PENALTY: "presence_penalty",
    sc.GENAI_REQUEST_CHOICE_COUNT: "n",
}
_EVENT_ROLES = {
    sc.GENAI_EVENT_SYSTEM_MESSAGE: "system",
    sc.GENAI_EVENT_USER_MESSAGE: "user",
    sc.GENAI_EVENT_ASSISTANT_MESSAGE: "assistant",
    sc.GENAI_EVENT_TOOL_MESSAGE: "tool",
}


def _json_list(v: SpanView, key: str, attrs: dict[str, AttributeValue]) -> Any:
    raw = attrs.get(key)
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, str):
        if raw is not None:
            v.bad(key, "JSON text", raw)
        return None
    try:
        return json.loads(raw)
    except ValueError:
        v.bad(key, "JSON list text", raw)
        return None


def _event_messages(v: SpanView) -> tuple[list[Message], list[Message]]:
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in v.span.events:
        if event.name == sc.GENAI_EVENT_OPERATION_DETAILS:
            inputs.extend(
                messages_from_list(_json_list(v, sc.GENAI_INPUT_MESSAGES, event.attributes))
            )
            outputs.extend(
                messages_from_list(_json_list(v, sc.GENAI_OUTPUT_MESSAGES, event.attributes))
            )
        elif event.name in _EVENT_ROLES:
            obj = dict(event.attributes)
            obj.setdefault(sc.ROLE, _EVENT_ROLES[event.name])
            message = message_from_obj(obj)
            if message is not None:
                inputs.append(message)
        elif event.name == sc.GENAI_EVENT_CHOICE:
            raw = event.attributes.get("message")
            obj = raw if isinstance(raw, dict) else dict(event.attributes)
            obj.setdefault(sc.ROLE, "assistant")
            message = message_from_obj(obj)
            if message is not None:
                outputs.append(message)
    return inputs, outputs


def genai_llm(v: SpanView) -> LLMFields:
    """LLM fields of a GenAI chat span (attributes, or span events when content is there)."""
    params = {name: v.attrs[key] for key, name in _GENAI_PARAMS.items() if key in v.attrs}
    inputs = list(messages_from_list(_json_list(v, sc.GENAI_INPUT_MESSAGES, v.attrs)))
    outputs = list(messages_from_list(_json_list(v, sc.GENAI_OUTPUT_MESSAGES, v.attrs)))
    if not inputs and not outputs and v.span.events:
        inputs, outputs = _event_messages(v)
    system = v.attrs.get(sc.GENAI_SYSTEM_INSTRUCTIONS)
    if isinstance(system, str) and inputs and inputs[0].role != "system":
        try:
            parts = json.loads(system)
        except ValueError:
            parts = [{"type": "text", "content": system}]
        inputs.insert(0, Message(role="system", content=as_text(parts)))
    reasons = v.strings(sc.GENAI_RESPONSE_FINISH_REASONS)
    output_text, tool_calls = _outputs(outputs)
    return LLMFields(
        model=v.string(sc.GENAI_REQUEST_MODEL),
        response_model=v.string(sc.GENAI_RESPONSE_MODEL),
        provider=v.string(sc.GENAI_PROVIDER_NAME) or v.string(sc.GENAI_SYSTEM),
        params=params or None,
        messages=tuple(inputs),
        output_messages=tuple(outputs),
        finish_reasons=reasons,
        input_tokens=v.integer(sc.GENAI_USAGE_INPUT_TOKENS),
        output_tokens=v.integer(sc.GENAI_USAGE_OUTPUT_TOKENS),
        total_tokens=v.integer(sc.GENAI_USAGE_TOTAL_TOKENS),
        base_url=v.string(sc.GENAI_OPENAI_API_BASE),
        output_text=output_text,
        tool_calls=tool_calls,
    )


def genai_evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """``gen_ai.retrieval.documents`` (JSON list of ``{id, score}``) as evidence."""
    docs = _json_list(v, sc.GENAI_RETRIEVAL_DOCUMENTS, v.attrs)
    if not isinstance(docs, list):
        return None
    out = []
    for rank, doc in enumerate(docs, start=1):
        if not isinstance(doc, dict):
            v.bad(f"{sc.GENAI_RETRIEVAL_DOCUMENTS}[{rank - 1}]", "an object", doc)
            continue
        score = doc.get("score")
        doc_id = doc.get("id")
        content = doc.get(sc.CONTENT)
        out.append(
            Evidence(
                id=None if doc_id is None else str(doc_id),
                step_span_id=v.span.span_id,
                stage=stage,
                rank=rank,
                score=float(score)
                if isinstance(score, int | float) and not isinstance(score, bool)
                else None,
                content=content if isinstance(content, str) else None,
            )
        )
    return out


def genai_tool(v: SpanView) -> ToolFields:
    """Tool fields of a GenAI ``execute_tool`` span."""
    raw_args = v.attrs.get(sc.GENAI_TOOL_CALL_ARGUMENTS)
    arguments: Any = raw_args
    if isinstance(raw_args, str):
        arguments = _json_or_none(raw_args)
    result = v.attrs.get(sc.GENAI_TOOL_CALL_RESULT)
    return ToolFields(
        name=v.string(sc.GENAI_TOOL_NAME),
        call_id=v.text(sc.GENAI_TOOL_CALL_ID),
        arguments=arguments if isinstance(arguments, dict) else None,
        arguments_raw=raw_args if isinstance(raw_args, str) else None,
        result_content=None if result is None else as_text(result),
        error_type=v.text(sc.ERROR_TYPE),
    )


# --- OpenLLMetry / Traceloop ----------------------------------------------------------------


def _legacy_messages(v: SpanView, prefix: str) -> tuple[list[Message], list[str]]:
    out: list[Message] = []
    reasons: list[str] = []
    for _, group in v.groups(prefix):
        calls = []
        for _, call in indexed_groups(group, "tool_calls"):
            call_id, name, args = call.get("id"), call.get("name"), call.get("arguments")
            calls.append(
                RequestedToolCall(
                    call_id if isinstance(call_id, str) else None,
                    name if isinstance(name, str) else None,
                    args if isinstance(args, str) else None,
                )
            )
        role, content = group.get(sc.ROLE), group.get(sc.CONTENT)
        call_id = group.get("tool_call_id")
        reason = group.get("finish_reason")
        if isinstance(reason, str):
            reasons.append(reason)
        out.append(
            Message(
                role=role if isinstance(role, str) else None,
                content=content if isinstance(content, str) else None,
                tool_call_id=call_id if isinstance(call_id, str) else None,
                tool_calls=tuple(calls),
            )
        )
    return out, reasons


_NO_LLM_FIELDS = LLMFields()
#: The scalar keys :func:`traceloop_llm` reads besides the indexed message groups.
TRACELOOP_LLM_KEYS = (
    sc.LLM_IS_STREAMING,
    sc.GENAI_LEGACY_USAGE_PROMPT_TOKENS,
    sc.GENAI_LEGACY_USAGE_COMPLETION_TOKENS,
    sc.LLM_USAGE_TOTAL_TOKENS,
)


def traceloop_llm(v: SpanView) -> LLMFields:
    """LLM fields of an OpenLLMetry span (``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*``).

    Empty when the span carries none of the keys read here (nothing to report either).
    """
    inputs, _ = _legacy_messages(v, sc.GENAI_LEGACY_PROMPT)
    outputs, reasons = _legacy_messages(v, sc.GENAI_LEGACY_COMPLETION)
    if not inputs and not outputs:
        attrs = v.attrs
        if not any(key in attrs for key in TRACELOOP_LLM_KEYS):
            return _NO_LLM_FIELDS
    output_text, tool_calls = _outputs(outputs)
    return LLMFields(
        messages=tuple(inputs),
        output_messages=tuple(outputs),
        finish_reasons=tuple(reasons) or None,
        stream=v.boolean(sc.LLM_IS_STREAMING),
        input_tokens=v.integer(sc.GENAI_LEGACY_USAGE_PROMPT_TOKENS),
        output_tokens=v.integer(sc.GENAI_LEGACY_USAGE_COMPLETION_TOKENS),
        total_tokens=v.integer(sc.LLM_USAGE_TOTAL_TOKENS),
        output_text=output_text,
        tool_calls=tool_calls,
    )


def traceloop_request(v: SpanView) -> RequestFields:
    """Request fields of a Traceloop workflow root (entity input/output as recorded)."""
    return RequestFields(
        query=v.text(sc.TRACELOOP_ENTITY_INPUT), answer=v.text(sc.TRACELOOP_ENTITY_OUTPUT)
    )


def traceloop_tool(v: SpanView) -> ToolFields:
    """Tool fields of a Traceloop ``tool`` span."""
    raw = v.attrs.get(sc.TRACELOOP_ENTITY_INPUT)
    arguments = None
    decoded = _json_or_none(raw)
    if isinstance(decoded, dict):
        kwargs = decoded.get("kwargs")
        arguments = kwargs if isinstance(kwargs, dict) and not decoded.get("args") else decoded
    return ToolFields(
        name=v.string(sc.TRACELOOP_ENTITY_NAME),
        arguments=arguments,
        arguments_raw=raw if isinstance(raw, str) else None,
        result_content=v.text(sc.TRACELOOP_ENTITY_OUTPUT),
    )
