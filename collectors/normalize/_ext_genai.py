"""Extractors of OpenTelemetry GenAI spans (current and previous layouts)."""

from __future__ import annotations

import json
from typing import Any

from groundtrace.collectors.model import Evidence, Message
from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

from ._fields import LLMFields, ToolFields
from ._messages import as_text, message_from_obj, messages_from_list, text_and_calls
from ._values import SpanView, json_or_none

__all__ = ["genai_evidence", "genai_llm", "genai_tool"]

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
    output_text, tool_calls = text_and_calls(outputs)
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
        arguments = json_or_none(raw_args)
    result = v.attrs.get(sc.GENAI_TOOL_CALL_RESULT)
    return ToolFields(
        name=v.string(sc.GENAI_TOOL_NAME),
        call_id=v.text(sc.GENAI_TOOL_CALL_ID),
        arguments=arguments if isinstance(arguments, dict) else None,
        arguments_raw=raw_args if isinstance(raw_args, str) else None,
        result_content=None if result is None else as_text(result),
        error_type=v.text(sc.ERROR_TYPE),
    )
