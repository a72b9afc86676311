"""Message normalisation shared by request and response extraction.

Both OpenAI APIs (chat completions and responses) are reduced to one small message shape,
:class:`Message`, which is then written as OpenInference flattened attributes and as the
GenAI ``gen_ai.*.messages`` JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import AttributeValue, Recorder, safe_json

__all__ = [
    "Message",
    "ToolCall",
    "field_of",
    "flat_message_attrs",
    "genai_messages",
    "genai_system_instructions",
    "text_of_content",
    "tool_call_attrs",
]


@dataclass(slots=True)
class ToolCall:
    """A tool call requested by the model (or replayed in the conversation)."""

    id: str | None = None
    name: str | None = None
    arguments: str | None = None


@dataclass(slots=True)
class Message:
    """One message in normalised form."""

    role: str | None = None
    content: str | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None


def field_of(obj: Any, name: str) -> Any:
    """``obj[name]`` for mappings, ``obj.name`` otherwise; ``None`` when absent. Never raises."""
    if type(obj) is dict or isinstance(obj, Mapping):  # dict first: skips the ABC check
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def text_of_content(content: Any) -> str | None:
    """Text of a message content: a string, or a list of parts (text parts joined).

    Lists with non-text parts (images, audio) are kept as JSON so nothing is silently lost.
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        texts: list[str] = []
        for part in content:
            text = field_of(part, "text")
            if not isinstance(text, str):
                return safe_json(content)
            texts.append(text)
        return "\n".join(texts)
    return safe_json(content)


def _tool_calls(raw: Any) -> list[ToolCall]:
    if not raw:
        return []
    calls: list[ToolCall] = []
    for item in raw if isinstance(raw, list | tuple) else ():
        function = field_of(item, "function")
        calls.append(
            ToolCall(
                id=field_of(item, "id") or field_of(item, "call_id"),
                name=field_of(function, "name") if function is not None else None,
                arguments=field_of(function, "arguments") if function is not None else None,
            )
        )
    return calls


def chat_message(raw: Any) -> Message:
    """A chat-completions message (request dict or response object) in normalised form."""
    return Message(
        role=field_of(raw, "role"),
        content=text_of_content(field_of(raw, "content")),
        name=field_of(raw, "name"),
        tool_call_id=field_of(raw, "tool_call_id"),
        tool_calls=_tool_calls(field_of(raw, "tool_calls")),
    )


def responses_input_messages(instructions: Any, items: Any) -> list[Message]:
    """The input of a ``responses.create`` call as messages (instructions first, as system)."""
    messages: list[Message] = []
    if isinstance(instructions, str):
        messages.append(Message(role="system", content=instructions))
    if isinstance(items, str):
        messages.append(Message(role="user", content=items))
        return messages
    for item in items if isinstance(items, list | tuple) else ():
        kind = field_of(item, "type")
        if kind == "function_call":
            call = ToolCall(
                id=field_of(item, "call_id"),
                name=field_of(item, "name"),
                arguments=field_of(item, "arguments"),
            )
            messages.append(Message(role="assistant", tool_calls=[call]))
        elif kind == "function_call_output":
            output = field_of(item, "output")
            messages.append(
                Message(
                    role="tool",
                    content=text_of_content(output),
                    tool_call_id=field_of(item, "call_id"),
                )
            )
        else:
            messages.append(
                Message(
                    role=field_of(item, "role"), content=text_of_content(field_of(item, "content"))
                )
            )
    return messages


def flat_message_attrs(
    prefix: str, messages: Iterable[Message], rec: Recorder
) -> Iterator[tuple[str, AttributeValue]]:
    """OpenInference flattened attributes of ``messages`` under ``prefix`` (content masked)."""
    for i, msg in enumerate(messages):
        if msg.role is not None:
            yield sc.indexed(prefix, i, sc.OI_MESSAGE_ROLE), msg.role
        if msg.content is not None:
            key = sc.indexed(prefix, i, sc.OI_MESSAGE_CONTENT)
            yield key, rec.text(key, msg.content)
        if msg.name is not None:
            yield sc.indexed(prefix, i, sc.OI_MESSAGE_NAME), str(msg.name)
        if msg.tool_call_id is not None:
            yield sc.indexed(prefix, i, sc.OI_MESSAGE_TOOL_CALL_ID), str(msg.tool_call_id)
        for j, call in enumerate(msg.tool_calls):
            yield from tool_call_attrs(prefix, i, j, call, rec)


def tool_call_attrs(
    prefix: str, i: int, j: int, call: ToolCall, rec: Recorder | None
) -> Iterator[tuple[str, AttributeValue]]:
    """Flattened attributes of tool call ``j`` of message ``i``; no arguments without ``rec``."""
    calls = sc.OI_MESSAGE_TOOL_CALLS
    if call.id is not None:
        yield sc.nested(prefix, i, calls, j, sc.OI_TOOL_CALL_ID), call.id
    if call.name is not None:
        yield sc.nested(prefix, i, calls, j, sc.OI_TOOL_CALL_FUNCTION_NAME), call.name
    if call.arguments is not None and rec is not None:
        key = sc.nested(prefix, i, calls, j, sc.OI_TOOL_CALL_FUNCTION_ARGUMENTS)
        yield key, rec.text(key, call.arguments)


def _arguments_object(arguments: Any) -> Any:
    """Tool-call arguments as an object, as the GenAI conventions ask (the JSON text as it
    is when it does not parse)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def genai_system_instructions(instructions: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.system_instructions`` of instructions given apart from the chat history
    (the Responses API's ``instructions``): a list of text parts."""
    text = text_of_content(instructions)
    return None if text is None else [{"type": "text", "content": text}]


def genai_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Messages in the GenAI ``gen_ai.input.messages`` / ``gen_ai.output.messages`` layout."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        parts: list[dict[str, Any]] = []
        if msg.role == "tool":
            parts.append(
                {"type": "tool_call_response", "id": msg.tool_call_id, "response": msg.content}
            )
        elif msg.content is not None:
            parts.append({"type": "text", "content": msg.content})
        for call in msg.tool_calls:
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.id,
                    "name": call.name,
                    "arguments": _arguments_object(call.arguments),
                }
            )
        entry: dict[str, Any] = {"role": msg.role, "parts": parts}
        if msg.finish_reason is not None:
            entry["finish_reason"] = msg.finish_reason
        out.append(entry)
    return out
