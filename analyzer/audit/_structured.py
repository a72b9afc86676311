"""One structured-output model call: a JSON object back, or a visible protocol error."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from groundtrace.analyzer.judge import ProtocolErrorKind
from groundtrace.analyzer.llm import CallFailure, ChatRequest, ModelClient

__all__ = ["CallError", "StructuredCaller"]


@dataclass(frozen=True, slots=True)
class CallError:
    """Why a structured call gave no usable object (a SPEC §4.4 protocol-error kind)."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class StructuredCaller:
    """Sends one user message with a JSON-schema ``response_format`` through the client.

    Attributes:
        client: the shared model client (cache, retries, concurrency).
        model: model id at the endpoint.
        seed: sampling seed (temperature is 0).
        max_tokens: reply budget (a reply cut there is a ``truncation`` error).
    """

    client: ModelClient
    model: str
    seed: int = 0
    max_tokens: int = 96

    @property
    def name(self) -> str:
        """``<model>@<endpoint>``."""
        return f"{self.model}@{self.client.base_url}"

    def request(self, content: str, schema: dict[str, Any]) -> ChatRequest:
        """The chat request (one user message: chat templates such as Gemma's drop system)."""
        return ChatRequest(
            model=self.model,
            messages=({"role": "user", "content": content},),
            temperature=0.0,
            seed=self.seed,
            max_tokens=self.max_tokens,
            response_format={"type": "json_object", "schema": schema},
        )

    async def call(self, content: str, schema: dict[str, Any]) -> dict[str, Any] | CallError:
        """The reply's JSON object, or why there is none; never raises for a bad reply."""
        result = await self.client.complete(self.request(content, schema))
        if isinstance(result, CallFailure):
            return CallError(result.kind.value, result.message)
        if result.finish_reason == "length":
            return CallError(ProtocolErrorKind.TRUNCATION, "the reply was cut at the token budget")
        try:
            body = json.loads(result.text.strip())
        except ValueError:
            return CallError(ProtocolErrorKind.MALFORMED_JSON, f"not JSON: {result.text[:120]!r}")
        if not isinstance(body, dict):
            return CallError(ProtocolErrorKind.MALFORMED_JSON, "the reply is not a JSON object")
        return body
