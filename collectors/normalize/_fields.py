"""Typed results of the per-convention extractors, and the field-wise merge of several.

Each extractor reads one span of one convention and returns one of these records; a field
the span does not state is ``None``. Where several conventions describe the same span (an
LLM span carrying groundtrace, OpenInference and GenAI keys), :func:`merge` keeps, field by
field, the first value that is not empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple, TypeVar

from groundtrace.collectors.model import Message, RequestedToolCall

__all__ = ["AnswerFields", "LLMFields", "RequestFields", "ToolFields", "merge"]


class RequestFields(NamedTuple):
    """What a REQUEST (root) span says about the request."""

    query: str | None = None
    case_id: str | None = None
    app_name: str | None = None
    app_version: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    source_id: str | None = None
    schema_version: str | None = None
    #: the root's output, for conventions that record the answer there (OpenInference,
    #: Traceloop); groundtrace records it on the ANSWER span.
    answer: str | None = None


class AnswerFields(NamedTuple):
    """What an ANSWER span says (``span_id`` is ``""`` for an answer read from a root)."""

    span_id: str
    answer: str | None = None
    confidence: float | None = None
    cited_ids: tuple[str, ...] | None = None
    quotes: tuple[str, ...] | None = None


class ToolFields(NamedTuple):
    """What a TOOL span says about the tool call (the fields of ``ToolCall``)."""

    name: str | None = None
    call_id: str | None = None
    arguments: dict[str, Any] | None = None
    arguments_raw: str | None = None
    status: str | None = None
    error_type: str | None = None
    paths_read: tuple[str, ...] | None = None
    result_content: str | None = None
    result_hash: str | None = None
    result_size: int | None = None


class LLMFields(NamedTuple):
    """What an LLM span says about the model call."""

    model: str | None = None
    response_model: str | None = None
    provider: str | None = None
    api: str | None = None
    base_url: str | None = None
    stream: bool | None = None
    params: dict[str, Any] | None = None
    messages: tuple[Message, ...] | None = None
    output_messages: tuple[Message, ...] | None = None
    output_text: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] | None = None
    finish_reasons: tuple[str, ...] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    request_json: str | None = None


F = TypeVar("F", ToolFields, LLMFields)
_EMPTY: tuple[Any, ...] = ((), {})


def merge(kind: type[F], parts: Iterable[F]) -> F:
    """Field-wise merge: the first part with a non-empty value (not ``None``, ``()``, ``{}``)
    wins; a field no part states is ``None``."""
    merged: list[Any] = [None] * len(kind._fields)
    for part in parts:
        for i, value in enumerate(part):
            # only falsy values need the (slower) comparisons with the empty containers
            if merged[i] is None and value is not None and (value or value not in _EMPTY):
                merged[i] = value
    return kind(*merged)
