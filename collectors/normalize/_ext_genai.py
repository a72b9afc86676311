"""Extractors of OpenTelemetry GenAI spans (current and previous layouts)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from groundtrace.collectors.model import Evaluation, Evidence, Message
from groundtrace.collectors.spans import AttributeValue, SpanEvent
from groundtrace.sdk import semconv as sc

from ._documents import documents_evidence
from ._fields import LLMFields, RequestFields, ToolFields
from ._messages import as_text, message_from_obj, messages_from_list, text_and_calls
from ._values import SpanView, json_or_none

__all__ = ["genai_evaluation", "genai_evidence", "genai_llm", "genai_request", "genai_tool"]

_GENAI_PARAMS = {
    sc.GENAI_REQUEST_TEMPERATURE: "temperature",
    sc.GENAI_REQUEST_TOP_P: "top_p",
    sc.GENAI_REQUEST_TOP_K: "top_k",  # a double in the registry (groundtrace writes 20.0)
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


class _Content(NamedTuple):
    """The content of a GenAI model call, from attributes or from span events."""

    inputs: list[Message]
    outputs: list[Message]
    #: per-choice finish reasons (``finish_reason`` of each output message / choice event)
    reasons: list[str]
    system: AttributeValue | None = None
    tools: Any = None


def _reasons(items: Any) -> list[str]:
    if not isinstance(items, list):
        return []
    return [
        r for m in items if isinstance(m, dict) and isinstance(r := m.get("finish_reason"), str)
    ]


def _structured(v: SpanView, attrs: dict[str, AttributeValue]) -> _Content:
    """``gen_ai.input.messages`` / ``output.messages`` / ``system_instructions`` /
    ``tool.definitions`` of the span's attributes, or of its operation-details event."""
    raw_out = _json_list(v, sc.GENAI_OUTPUT_MESSAGES, attrs)
    return _Content(
        list(messages_from_list(_json_list(v, sc.GENAI_INPUT_MESSAGES, attrs))),
        list(messages_from_list(raw_out)),
        _reasons(raw_out),
        attrs.get(sc.GENAI_SYSTEM_INSTRUCTIONS),
        _json_list(v, sc.GENAI_TOOL_DEFINITIONS, attrs),
    )


def _from_events(v: SpanView) -> _Content:
    """Content from span events: the current operation-details event, or the older
    per-message events (``gen_ai.user.message``, ``gen_ai.choice``, ...)."""
    content = _Content([], [], [])
    for event in v.span.events:
        attrs = event.attributes
        if event.name == sc.GENAI_EVENT_OPERATION_DETAILS:
            found = _structured(v, attrs)
            content.inputs.extend(found.inputs)
            content.outputs.extend(found.outputs)
            content.reasons.extend(found.reasons)
            content = content._replace(
                system=content.system or found.system, tools=content.tools or found.tools
            )
        elif event.name in _EVENT_ROLES:
            obj = dict(attrs)
            obj.setdefault(sc.ROLE, _EVENT_ROLES[event.name])
            message = message_from_obj(obj)
            if message is not None:
                content.inputs.append(message)
        elif event.name == sc.GENAI_EVENT_CHOICE:
            raw = attrs.get("message")
            obj = raw if isinstance(raw, dict) else dict(attrs)
            obj.setdefault(sc.ROLE, "assistant")
            message = message_from_obj(obj)
            if message is not None:
                content.outputs.append(message)
            content.reasons.extend(_reasons([attrs]))
    return content


def _system_text(raw: AttributeValue | None) -> str | None:
    """``gen_ai.system_instructions`` (JSON list of parts; plain text is taken as it is)."""
    if isinstance(raw, list):
        return as_text(raw)
    if not isinstance(raw, str):
        return None
    try:
        parts = json.loads(raw)
    except ValueError:
        return raw
    return as_text(parts)


def genai_llm(v: SpanView) -> LLMFields:
    """LLM fields of a GenAI model-call span.

    Content is read from the structured attributes (``gen_ai.input.messages``, ...) or, when
    the span has none, from its events (current or older layout). ``gen_ai.provider.name``
    supersedes ``gen_ai.system``; the tool definitions offered are ``params["tools"]``.
    """
    params: dict[str, Any] = {
        name: v.attrs[key] for key, name in _GENAI_PARAMS.items() if key in v.attrs
    }
    content = _structured(v, v.attrs)
    if not content.inputs and not content.outputs and v.span.events:
        content = _from_events(v)
    inputs = content.inputs
    system = _system_text(content.system)
    if system is not None and (not inputs or inputs[0].role != "system"):
        inputs.insert(0, Message(role="system", content=system))
    if isinstance(content.tools, list):
        params["tools"] = content.tools
    reasons = v.strings(sc.GENAI_RESPONSE_FINISH_REASONS) or tuple(content.reasons) or None
    output_text, tool_calls = text_and_calls(content.outputs)
    return LLMFields(
        model=v.string(sc.GENAI_REQUEST_MODEL),
        response_model=v.string(sc.GENAI_RESPONSE_MODEL),
        provider=v.string(sc.GENAI_PROVIDER_NAME) or v.string(sc.GENAI_SYSTEM),
        params=params or None,
        messages=tuple(inputs),
        output_messages=tuple(content.outputs),
        finish_reasons=reasons,
        input_tokens=v.integer(sc.GENAI_USAGE_INPUT_TOKENS),
        output_tokens=v.integer(sc.GENAI_USAGE_OUTPUT_TOKENS),
        total_tokens=v.integer(sc.GENAI_USAGE_TOTAL_TOKENS),
        base_url=v.string(sc.GENAI_OPENAI_API_BASE),
        output_text=output_text,
        tool_calls=tool_calls,
    )


def genai_request(v: SpanView) -> RequestFields:
    """Request fields of a GenAI ``invoke_agent`` / ``invoke_workflow`` root: the last user
    message is the query, the last output message the answer."""
    content = _structured(v, v.attrs)
    queries = [m.content for m in content.inputs if m.role == "user" and m.content]
    answers = [m.content for m in content.outputs if m.content]
    return RequestFields(
        query=queries[-1] if queries else None,
        session_id=v.text(sc.GENAI_CONVERSATION_ID),
        answer=answers[-1] if answers else None,
    )


def genai_evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """``gen_ai.retrieval.documents`` (JSON list of ``{id, score, content}``) as evidence."""
    docs = _json_list(v, sc.GENAI_RETRIEVAL_DOCUMENTS, v.attrs)
    if not isinstance(docs, list):
        return None
    return documents_evidence(v, docs, sc.GENAI_RETRIEVAL_DOCUMENTS, stage)


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


def genai_evaluation(v: SpanView, event: SpanEvent) -> Evaluation | None:
    """A ``gen_ai.evaluation.result`` event (or log record joined as one) of the span.

    ``None``, with a ``bad_attribute_type`` finding, when it has no evaluation name.
    """
    e = SpanView(v.span, v.findings)
    e.attrs = event.attributes
    name = e.text(sc.GENAI_EVALUATION_NAME)
    if not name:
        e.bad(
            sc.GENAI_EVALUATION_NAME, "the evaluation's name", e.attrs.get(sc.GENAI_EVALUATION_NAME)
        )
        return None
    return Evaluation(
        span_id=v.span.span_id,
        name=name,
        score_value=e.number(sc.GENAI_EVALUATION_SCORE_VALUE),
        score_label=e.text(sc.GENAI_EVALUATION_SCORE_LABEL),
        explanation=e.text(sc.GENAI_EVALUATION_EXPLANATION),
        response_id=e.text(sc.GENAI_RESPONSE_ID),
        error_type=e.text(sc.ERROR_TYPE),
        evidence_id=e.text(sc.GT_EVALUATION_EVIDENCE_ID),
        document_position=e.integer(sc.GT_EVALUATION_DOCUMENT_POSITION),
    )
