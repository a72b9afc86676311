"""Tier 2, endpoint: an OpenAI-compatible server that returns prompt log-probabilities.

vLLM's ``POST /v1/completions`` with ``echo: true`` and ``logprobs`` returns, in the legacy
completions form, every prompt token with its log-probability and character offset
(``tokens``, ``token_logprobs``, ``text_offset``). The prompt sent is the chat-formatted
prompt followed by the answer text; the answer's tokens are those that end after the prompt's
last character and start before the answer's end (the one token generated because a
completion must generate one is left out). Chat formatting happens here, with the template of
the served model (:func:`chatml` for Qwen-family models, or any callable).

The project's model client sends chat completions only, so this tier talks to the server with
httpx; its results go through the same content-addressed :class:`~._cache.ScoreCache` as the
in-process tier (via :class:`~._scorer.ContextScorer`). Hosted chat APIs return only generated
tokens' log-probabilities and cannot serve this tier; TGI's ``decoder_input_details`` form is
not read yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from groundtrace.analyzer.errors import BackendUnavailableError

from ._scorer import Tier

__all__ = ["EndpointScorer", "answer_logprobs", "chatml"]

#: Renders chat messages into the prompt text the model reads before its answer.
ChatTemplate = Callable[[Sequence[Mapping[str, Any]]], str]


def chatml(messages: Sequence[Mapping[str, Any]]) -> str:
    """The ChatML prompt (Qwen's template, no default system message) with the generation
    prompt ``<|im_start|>assistant\\n``."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def answer_logprobs(logprobs: Mapping[str, Any], start: int, end: int) -> list[float]:
    """The log-probabilities of the tokens covering ``text[start:end]`` in a legacy
    completions ``logprobs`` object.

    Raises:
        ValueError: the object lacks the fields, or an answer token has no log-probability.
    """
    tokens = logprobs.get("tokens")
    values = logprobs.get("token_logprobs")
    offsets = logprobs.get("text_offset")
    if (
        not isinstance(tokens, list)
        or not isinstance(values, list)
        or not isinstance(offsets, list)
    ):
        raise ValueError("logprobs has no tokens, token_logprobs and text_offset lists")
    out: list[float] = []
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if int(offset) + len(str(token)) > start and int(offset) < end:
            if value is None:
                raise ValueError(f"the answer token at offset {offset} has no log-probability")
            out.append(float(value))
    if not out:
        raise ValueError("no token of the answer in the echoed prompt")
    return out


class EndpointScorer:
    """Answer log-probabilities from a server's ``/v1/completions`` with ``echo``.

    Args:
        base_url: the server's OpenAI base URL (``http://host:8000/v1``).
        model: the served model's name (sent as ``model``; part of the cache key).
        template: renders messages into the prompt text (default :func:`chatml`).
        api_key: sent as a bearer token when given.
        timeout: seconds per request.
        client: an httpx client to use (tests inject transports).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        template: ChatTemplate = chatml,
        api_key: str | None = None,
        timeout: float = 120.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.model = model
        self._url = base_url.rstrip("/") + "/completions"
        self._template = template
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout, headers=headers)

    @property
    def tier(self) -> Tier:
        """``endpoint``."""
        return "endpoint"

    def score_many(
        self, prompts: Sequence[Sequence[Mapping[str, Any]]], answer: str, prefix: str = ""
    ) -> list[list[float]]:
        """Per-token log-probabilities of ``answer`` after each prompt and the reply's
        unscored ``prefix``, one request each.

        Raises:
            BackendUnavailableError: the server cannot be reached, refuses the request, or
                returns no prompt log-probabilities (the message says which).
        """
        return [self._score(self._template(p) + prefix, answer) for p in prompts]

    def _score(self, prompt: str, answer: str) -> list[float]:
        body = {
            "model": self.model, "prompt": prompt + answer, "echo": True, "logprobs": 0,
            "max_tokens": 1, "temperature": 0.0,
        }  # fmt: skip
        try:
            reply = self._client.post(self._url, json=body)
        except httpx.HTTPError as exc:
            raise BackendUnavailableError(f"cannot reach {self._url}: {exc}") from exc
        if not reply.is_success:
            raise BackendUnavailableError(
                f"{self._url} answered {reply.status_code} to an echo+logprobs request "
                f"(it must return prompt log-probabilities, as vLLM does): {reply.text[:200]}"
            )
        try:
            choice = reply.json()["choices"][0]
            return answer_logprobs(choice["logprobs"] or {}, len(prompt), len(prompt + answer))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise BackendUnavailableError(
                f"{self._url} returned no prompt log-probabilities for the answer: {exc}"
            ) from exc

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
