"""Chat messages of the various layouts (OpenAI, GenAI parts, flattened) into :class:`Message`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from groundtrace.collectors.model import Message, RequestedToolCall

__all__ = [
    "as_text",
    "message_from_obj",
    "messages_from_list",
    "text_and_calls",
    "tool_call_from_obj",
]


def as_text(value: Any) -> str | None:
    """A content value as text: strings as-is, text parts joined, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        texts = [p.get("text", p.get("content")) for p in value]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _arguments_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def tool_call_from_obj(obj: Any) -> RequestedToolCall | None:
    """An OpenAI ``tool_calls`` item (``{id, function: {name, arguments}}``) or GenAI part."""
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict):
        return RequestedToolCall(
            _opt_str(obj.get("id")),
            _opt_str(function.get("name")),
            _arguments_text(function.get("arguments")),
        )
    return RequestedToolCall(
        _opt_str(obj.get("id")), _opt_str(obj.get("name")), _arguments_text(obj.get("arguments"))
    )


def _from_parts(role: str | None, parts: list[Any], obj: dict[str, Any]) -> Message:
    texts: list[str] = []
    calls: list[RequestedToolCall] = []
    tool_call_id: str | None = None
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "tool_call":
            call = tool_call_from_obj(part)
            if call is not None:
                calls.append(call)
        elif kind == "tool_call_response":
            tool_call_id = _opt_str(part.get("id"))
            texts.append(as_text(part.get("response")) or "")
        else:
            text = part.get("content", part.get("text"))
            if text is not None:
                texts.append(text if isinstance(text, str) else as_text(text) or "")
    return Message(
        role=role,
        content="".join(texts) if texts else None,
        name=_opt_str(obj.get("name")),
        tool_call_id=tool_call_id,
        tool_calls=tuple(calls),
    )


def message_from_obj(obj: Any) -> Message | None:
    """An OpenAI-style message dict, or a GenAI ``{role, parts}`` message."""
    if not isinstance(obj, dict):
        return None
    get = obj.get
    role = get("role")
    if not isinstance(role, str):
        role = None
    parts = get("parts")
    if isinstance(parts, list):
        return _from_parts(role, parts, obj)
    raw_calls = get("tool_calls")
    calls = (
        tuple(c for c in map(tool_call_from_obj, raw_calls) if c is not None)
        if isinstance(raw_calls, list)
        else ()
    )
    content = get("content")
    name = get("name")
    call_id = get("tool_call_id")
    return Message(
        role,
        content if content is None or isinstance(content, str) else as_text(content),
        name if isinstance(name, str) else None,
        call_id if isinstance(call_id, str) else None,
        calls,
    )


def messages_from_list(items: Any) -> tuple[Message, ...]:
    """Every message of a JSON list (non-objects are skipped)."""
    if not isinstance(items, list):
        return ()
    return tuple(m for m in map(message_from_obj, items) if m is not None)


def text_and_calls(
    outputs: Sequence[Message],
) -> tuple[str | None, tuple[RequestedToolCall, ...] | None]:
    """``output_text`` and ``tool_calls`` of an LLM call, from its output messages."""
    if not outputs:
        return None, None
    return outputs[0].content, tuple(c for m in outputs for c in m.tool_calls)
