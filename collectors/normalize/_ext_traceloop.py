"""Extractors of OpenLLMetry/Traceloop spans."""

from __future__ import annotations

from typing import Any

from groundtrace.collectors.model import Evidence, FindingKind, Message, RequestedToolCall
from groundtrace.sdk import semconv as sc

from ._documents import documents_evidence
from ._fields import LLMFields, RequestFields, ToolFields
from ._flat import indexed_groups
from ._messages import text_and_calls
from ._values import QUERY_KEYS, SpanView, json_or_none, query_in

__all__ = [
    "TRACELOOP_LLM_KEYS",
    "traceloop_evidence",
    "traceloop_llm",
    "traceloop_request",
    "traceloop_tool",
]


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
    output_text, tool_calls = text_and_calls(outputs)
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


def _call_query(call: dict[str, Any]) -> str | None:
    """The query of a recorded call ``{"args": [...], "kwargs": {...}}``: a ``query`` /
    ``question`` / ``input`` keyword, else the first string positional argument."""
    query = query_in(call.get("kwargs"))
    args = call.get("args")
    if query is None and isinstance(args, list):
        query = next((arg for arg in args if isinstance(arg, str)), None)
    return query


def _entity_query(v: SpanView) -> str | None:
    """The query in ``traceloop.entity.input`` (the decorator records the call's arguments;
    the LangChain instrumentation ``{"inputs": ..., "kwargs": ...}``)."""
    text = v.text(sc.TRACELOOP_ENTITY_INPUT)
    decoded = json_or_none(text)
    if isinstance(decoded, str):
        return decoded
    if isinstance(decoded, dict) and "inputs" in decoded:  # a LangChain run's recorded input
        inputs = decoded["inputs"]
        return inputs if isinstance(inputs, str) else query_in(inputs)
    if not isinstance(decoded, dict) or not ({"args", "kwargs"} & decoded.keys()):
        return text  # not a recorded call: the text as written
    query = _call_query(decoded)
    if query is None:
        v.finding(
            FindingKind.NO_QUERY,
            f"{sc.TRACELOOP_ENTITY_INPUT} of span {v.span.span_id} has no string argument "
            f"and no {'/'.join(QUERY_KEYS)} keyword",
            sc.TRACELOOP_ENTITY_INPUT,
        )
    return query


def _entity_answer(v: SpanView) -> str | None:
    """``traceloop.entity.output``: a JSON string un-quoted, a LangChain run's text
    ``{"outputs": "...", "kwargs": ...}`` taken out, anything else kept as its text."""
    text = v.text(sc.TRACELOOP_ENTITY_OUTPUT)
    decoded = json_or_none(text)
    if isinstance(decoded, dict) and isinstance(decoded.get("outputs"), str):
        return str(decoded["outputs"])
    return decoded if isinstance(decoded, str) else text


def traceloop_request(v: SpanView) -> RequestFields:
    """Request fields of a Traceloop workflow root: the query and the answer decoded from the
    entity input and output."""
    return RequestFields(query=_entity_query(v), answer=_entity_answer(v))


def traceloop_tool(v: SpanView) -> ToolFields:
    """Tool fields of a Traceloop ``tool`` span."""
    raw = v.attrs.get(sc.TRACELOOP_ENTITY_INPUT)
    arguments = None
    decoded = json_or_none(raw)
    if isinstance(decoded, dict):
        kwargs = decoded.get("kwargs")
        arguments = kwargs if isinstance(kwargs, dict) and not decoded.get("args") else decoded
    return ToolFields(
        name=v.string(sc.TRACELOOP_ENTITY_NAME),
        arguments=arguments,
        arguments_raw=raw if isinstance(raw, str) else None,
        result_content=v.text(sc.TRACELOOP_ENTITY_OUTPUT),
    )


def traceloop_evidence(v: SpanView, stage: str) -> list[Evidence] | None:
    """The documents of an OpenLLMetry retriever span: its ``traceloop.entity.output``, a
    JSON object ``{"documents": [{"page_content", "metadata"}...], "count"}`` (or a bare
    list of documents)."""
    raw = v.attrs.get(sc.TRACELOOP_ENTITY_OUTPUT)
    if raw is None:
        return None
    data = json_or_none(raw) if isinstance(raw, str) else None
    docs = data.get("documents") if isinstance(data, dict) else data
    if not isinstance(docs, list):
        v.bad(sc.TRACELOOP_ENTITY_OUTPUT, "JSON of the retrieved documents", raw)
        return None
    return documents_evidence(v, docs, sc.TRACELOOP_ENTITY_OUTPUT, stage)
