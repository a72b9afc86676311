"""Requests, results and failures of the shared model client."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "CallFailure",
    "CallResult",
    "ChatRequest",
    "ChatResponse",
    "FailureKind",
    "cache_key",
]

#: Version of the cache-key canonicalisation; bumping it invalidates every cached call.
CACHE_KEY_VERSION = 1


class FailureKind(StrEnum):
    """Why a model call produced no usable response."""

    HTTP_ERROR = "http_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    INVALID_RESPONSE = "invalid_response"
    #: not sent at all: ``--estimate`` records the request instead (see ``RequestRecorder``)
    NOT_SENT = "not_sent"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat-completion call, independent of the endpoint that serves it.

    Attributes:
        model: model id as the endpoint names it (part of the cache key).
        messages: OpenAI-style messages (``{"role": ..., "content": ...}``).
        temperature: sampling temperature (default 0: deterministic).
        seed: sampling seed sent to the endpoint and recorded.
        max_tokens: completion token budget, if any.
        response_format: OpenAI ``response_format`` object, if any (e.g. ``json_object``).
        params: further request parameters (``top_p``, ``stop``...), sent as given.
    """

    model: str
    messages: tuple[dict[str, Any], ...]
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def canonical(self) -> dict[str, Any]:
        """The endpoint-independent identity of this call (what the cache key hashes)."""
        return {
            "v": CACHE_KEY_VERSION,
            "model": self.model,
            "messages": list(self.messages),
            "parameters": {
                "temperature": self.temperature,
                "seed": self.seed,
                "max_tokens": self.max_tokens,
                **self.params,
            },
            "response_format": self.response_format,
        }


def cache_key(request: ChatRequest) -> str:
    """sha256 of the canonical JSON of ``request`` (sorted keys, no whitespace)."""
    payload = json.dumps(
        request.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A completed call.

    Attributes:
        text: the first choice's message content (may legitimately be empty).
        finish_reason: the endpoint's finish reason (``stop``, ``length``...).
        model: the model the endpoint reports having used.
        usage: token usage as reported (``prompt_tokens``, ``completion_tokens``...).
        key: the cache key of the request.
        cached: True when served from the cache (no call was made).
        attempts: HTTP attempts made for this response (0 when cached).
    """

    text: str
    finish_reason: str | None
    model: str | None
    usage: dict[str, int]
    key: str
    cached: bool = False
    attempts: int = 1

    @property
    def ok(self) -> bool:
        """Always True: a response, not a failure."""
        return True


@dataclass(frozen=True, slots=True)
class CallFailure:
    """A call that failed after every allowed attempt (never raised, always returned).

    Attributes:
        kind: failure category.
        message: what went wrong, for the report.
        key: the cache key of the request.
        status: HTTP status code for ``http_error``.
        attempts: HTTP attempts made.
        raw: raw response body, when one was received and could not be used.
    """

    kind: FailureKind
    message: str
    key: str
    status: int | None = None
    attempts: int = 1
    raw: str | None = None

    @property
    def ok(self) -> bool:
        """Always False: a failure."""
        return False


#: What :meth:`ModelClient.complete` returns.
CallResult = ChatResponse | CallFailure
