"""Response-side attributes of an OpenAI call.

Chat completions, responses and the aggregate of a stream are all reduced to one
:class:`Output`, written by :func:`output_attrs`. Every optional field may be missing (no
usage, no token details, no finish reason): a missing field is skipped, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import AttributeValue, Recorder, safe_json

from ._messages import (
    Message,
    ToolCall,
    field_of,
    flat_message_attrs,
    genai_messages,
    tool_call_attrs,
)

__all__ = ["Output", "output_attrs", "output_from_chat", "output_from_response"]


@dataclass(slots=True)
class Output:
    """What a call returned, in normalised form."""

    id: str | None = None
    model: str | None = None
    messages: list[Message] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    #: input tokens served from the provider's cache (``*_tokens_details.cached_tokens``)
    cache_read_tokens: int | None = None
    #: output tokens spent on reasoning (``*_tokens_details.reasoning_tokens``)
    reasoning_tokens: int | None = None
    service_tier: str | None = None
    system_fingerprint: str | None = None

    def set_usage(self, usage: Any, input_name: str, output_name: str) -> None:
        """Read token counts from a usage object (any of them may be missing): the totals
        under ``input_name`` / ``output_name`` and the cached / reasoning counts in their
        ``<name>_details`` objects (chat: ``prompt_tokens_details``, responses:
        ``input_tokens_details``)."""
        if usage is None:
            return
        self.input_tokens = _int(field_of(usage, input_name))
        self.output_tokens = _int(field_of(usage, output_name))
        self.total_tokens = _int(field_of(usage, "total_tokens"))
        input_details = field_of(usage, f"{input_name}_details")
        output_details = field_of(usage, f"{output_name}_details")
        self.cache_read_tokens = _int(field_of(input_details, "cached_tokens"))
        self.reasoning_tokens = _int(field_of(output_details, "reasoning_tokens"))

    def set_service(self, resp: Any) -> None:
        """``service_tier`` and ``system_fingerprint`` of a response or chunk, when it has them."""
        tier = _str(field_of(resp, "service_tier"))
        if tier is not None:
            self.service_tier = tier
        fingerprint = _str(field_of(resp, "system_fingerprint"))
        if fingerprint is not None:
            self.system_fingerprint = fingerprint


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def output_from_chat(resp: Any) -> Output:
    """Normalise a ``ChatCompletion``."""
    out = Output(id=_str(field_of(resp, "id")), model=_str(field_of(resp, "model")))
    for choice in field_of(resp, "choices") or ():
        msg = field_of(choice, "message")
        calls = [
            ToolCall(
                id=_str(field_of(tc, "id")),
                name=_str(field_of(field_of(tc, "function"), "name")),
                arguments=_str(field_of(field_of(tc, "function"), "arguments")),
            )
            for tc in field_of(msg, "tool_calls") or ()
        ]
        content = field_of(msg, "content")
        out.messages.append(
            Message(
                role=_str(field_of(msg, "role")) or "assistant",
                content=content if isinstance(content, str) else None,
                tool_calls=calls,
                finish_reason=_str(field_of(choice, "finish_reason")),
            )
        )
    out.set_usage(field_of(resp, "usage"), "prompt_tokens", "completion_tokens")
    out.set_service(resp)
    return out


def output_from_response(resp: Any) -> Output:
    """Normalise a responses-API ``Response`` (text and function calls of its output)."""
    out = Output(id=_str(field_of(resp, "id")), model=_str(field_of(resp, "model")))
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in field_of(resp, "output") or ():
        kind = field_of(item, "type")
        if kind == "message":
            for part in field_of(item, "content") or ():
                text = field_of(part, "text")
                if field_of(part, "type") == "output_text" and isinstance(text, str):
                    texts.append(text)
        elif kind == "function_call":
            calls.append(
                ToolCall(
                    id=_str(field_of(item, "call_id")),
                    name=_str(field_of(item, "name")),
                    arguments=_str(field_of(item, "arguments")),
                )
            )
    status = _str(field_of(resp, "status"))
    out.messages.append(
        Message(
            role="assistant",
            content="".join(texts) if texts or not calls else None,
            tool_calls=calls,
            finish_reason=status,
        )
    )
    out.set_usage(field_of(resp, "usage"), "input_tokens", "output_tokens")
    out.set_service(resp)
    return out


def _output_value(msg: Message) -> str:
    if msg.tool_calls:
        return safe_json(genai_messages([msg]))
    return msg.content or ""


def output_attrs(out: Output, rec: Recorder, capture: bool) -> Iterator[tuple[str, AttributeValue]]:
    """All response-side attributes of one call."""
    if out.id is not None:
        yield sc.GENAI_RESPONSE_ID, out.id
    if out.model is not None:
        yield sc.GENAI_RESPONSE_MODEL, out.model
        yield sc.OI_LLM_MODEL_NAME, out.model
    reasons = [m.finish_reason for m in out.messages if m.finish_reason is not None]
    if reasons:
        yield sc.GENAI_RESPONSE_FINISH_REASONS, reasons
    if out.input_tokens is not None:
        yield sc.GENAI_USAGE_INPUT_TOKENS, out.input_tokens
        yield sc.OI_LLM_TOKEN_COUNT_PROMPT, out.input_tokens
    if out.output_tokens is not None:
        yield sc.GENAI_USAGE_OUTPUT_TOKENS, out.output_tokens
        yield sc.OI_LLM_TOKEN_COUNT_COMPLETION, out.output_tokens
    if out.total_tokens is not None:
        yield sc.OI_LLM_TOKEN_COUNT_TOTAL, out.total_tokens
    latest = rec.settings.genai_latest  # the current set only (v1.36.0 had none of these)
    if out.cache_read_tokens is not None:
        yield sc.OI_LLM_TOKEN_COUNT_PROMPT_CACHE_READ, out.cache_read_tokens
        if latest:
            yield sc.GENAI_USAGE_CACHE_READ_INPUT_TOKENS, out.cache_read_tokens
    if out.reasoning_tokens is not None:
        yield sc.OI_LLM_TOKEN_COUNT_COMPLETION_REASONING, out.reasoning_tokens
        if latest:
            yield sc.GENAI_USAGE_REASONING_OUTPUT_TOKENS, out.reasoning_tokens
    if latest:
        if out.service_tier is not None:
            yield sc.OPENAI_RESPONSE_SERVICE_TIER, out.service_tier
        if out.system_fingerprint is not None:
            yield sc.OPENAI_RESPONSE_SYSTEM_FINGERPRINT, out.system_fingerprint
    if capture:
        yield from flat_message_attrs(sc.OI_LLM_OUTPUT_MESSAGES, out.messages, rec)
        if out.messages:
            first = out.messages[0]
            if first.content is not None:
                yield sc.GT_LLM_OUTPUT_TEXT, rec.text(sc.GT_LLM_OUTPUT_TEXT, first.content)
            yield sc.OI_OUTPUT_VALUE, rec.text(sc.OI_OUTPUT_VALUE, _output_value(first))
            yield sc.OI_OUTPUT_MIME_TYPE, "application/json" if first.tool_calls else "text/plain"
        if rec.settings.genai_latest:
            yield (
                sc.GENAI_OUTPUT_MESSAGES,
                rec.json(sc.GENAI_OUTPUT_MESSAGES, genai_messages(out.messages)),
            )
    else:
        # Structure without content: which tools were requested (names and ids only).
        for i, msg in enumerate(out.messages):
            yield sc.indexed(sc.OI_LLM_OUTPUT_MESSAGES, i, sc.OI_MESSAGE_ROLE), msg.role or ""
            for j, call in enumerate(msg.tool_calls):
                yield from tool_call_attrs(sc.OI_LLM_OUTPUT_MESSAGES, i, j, call, None)
