"""Tier 2, endpoint: a server that returns prompt log-probabilities, in one of two forms.

* ``vllm``: vLLM's (OpenAI legacy) ``POST /v1/completions`` with ``echo: true`` and
  ``logprobs`` returns every prompt token with its log-probability and character offset
  (``tokens``, ``token_logprobs``, ``text_offset``);
* ``tgi``: text-generation-inference's ``POST /generate`` with ``details`` and
  ``decoder_input_details`` returns the prefill tokens (``details.prefill``: ``text``,
  ``logprob``); their offsets are the running sum of their texts' lengths (leading special
  tokens such as ``<s>``, whose text the prompt does not hold, are skipped).

The prompt sent is the chat-formatted prompt followed by the answer text; the answer's tokens
are those that end after the prompt's last character and start before the answer's end (the
one token generated because a request must generate one is left out). Chat formatting happens
here, with the template of the served model (:func:`chatml` for Qwen-family models, or any
callable).

With ``form="auto"`` the first request probes the server: the vLLM form first, then the TGI
form; the first that returns the answer's log-probabilities is kept for every later request.
A server offering neither (no echo, no prompt log-probabilities, an error) is refused with a
:class:`~groundtrace.analyzer.errors.BackendUnavailableError` naming each URL tried and what it
returned — never a silent 0 or NaN.

The project's model client sends chat completions only, so this tier talks to the server with
httpx, but as the client does: through the endpoint's shared rate limiter
(:meth:`~groundtrace.analyzer.llm.ModelClient.shared_limiter`, a 429 pausing every client of
the endpoint) and with the project's :class:`~groundtrace.analyzer.llm.RetryPolicy` on
408/429/5xx (:meth:`~groundtrace.analyzer.llm.RetryPolicy.backoff`, ``Retry-After``
honoured). Its results go through the same content-addressed
:class:`~._cache.ScoreCache` as the in-process tier (via :class:`~._scorer.ContextScorer`).
Hosted chat APIs return only generated tokens' log-probabilities and cannot serve this tier.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal

import httpx

from groundtrace.analyzer.errors import BackendUnavailableError
from groundtrace.analyzer.llm import ModelClient, RetryPolicy

from ._scorer import Tier

__all__ = ["EndpointForm", "EndpointScorer", "answer_logprobs", "chatml", "prefill_logprobs"]

#: Renders chat messages into the prompt text the model reads before its answer.
ChatTemplate = Callable[[Sequence[Mapping[str, Any]]], str]
#: How the server is asked for prompt log-probabilities (``auto``: probed on the first request).
EndpointForm = Literal["auto", "vllm", "tgi"]


def chatml(messages: Sequence[Mapping[str, Any]]) -> str:
    """The ChatML prompt (Qwen's template, no default system message) with the generation
    prompt ``<|im_start|>assistant\\n``."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def answer_logprobs(logprobs: Mapping[str, Any], start: int, end: int) -> list[float]:
    """The log-probabilities of the tokens covering ``text[start:end]`` in a legacy
    completions ``logprobs`` object.

    Raises:
        ValueError: the object lacks the fields, its tokens do not reach ``end`` (the prompt
            was not echoed), or an answer token has no finite log-probability.
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
    spans = [(int(o), int(o) + len(str(t))) for t, o in zip(tokens, offsets, strict=True)]
    low, high = min((a for a, _ in spans), default=0), max((b for _, b in spans), default=0)
    if not spans or low > start or high < end:
        raise ValueError(f"its tokens span characters {low} to {high}, not the 0 to {end} of "
                         "the prompt and answer sent: the prompt was not echoed")  # fmt: skip
    out: list[float] = []
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if int(offset) + len(str(token)) > start and int(offset) < end:
            if value is None or not math.isfinite(float(value)):
                raise ValueError(f"the answer token at offset {offset} has no log-probability "
                                 f"(got {value!r})")  # fmt: skip
            out.append(float(value))
    if not out:
        raise ValueError("no token of the answer in the echoed prompt")
    return out


def prefill_logprobs(prefill: Sequence[Mapping[str, Any]], text: str) -> dict[str, Any]:
    """TGI's ``details.prefill`` tokens for ``text`` as a legacy ``logprobs`` object (offsets
    from the running sum of the tokens' texts), for :func:`answer_logprobs`.

    Leading tokens whose text does not start the prompt (``<s>``, ``<|begin_of_text|>``) are
    skipped.

    Raises:
        ValueError: the tokens' texts do not spell ``text``.
    """
    tokens = [str(t.get("text", "")) for t in prefill]
    first = 0
    while first < len(tokens) and tokens[first] and not text.startswith(tokens[first]):
        first += 1
    tokens, values = tokens[first:], [t.get("logprob") for t in prefill[first:]]
    if "".join(tokens) != text:
        raise ValueError("the prefill tokens' texts do not spell the prompt sent, so the "
                         "answer's tokens cannot be located")  # fmt: skip
    offsets = [0]
    for token in tokens[:-1]:
        offsets.append(offsets[-1] + len(token))
    return {"tokens": tokens, "token_logprobs": values, "text_offset": offsets}


class _Refused(Exception):
    """A form the server does not serve (why, with the URL), for the probe to try the next."""


class EndpointScorer:
    """Answer log-probabilities from a server's prompt log-probabilities (vLLM or TGI form).

    Every HTTP attempt waits for its start from the endpoint's shared rate limiter (with
    ``rate_limit``), and a 408/429/5xx answer is retried after the ``retry`` policy's delay
    (its ``Retry-After`` honoured; a 429 pauses every client of the endpoint).

    Args:
        base_url: the server's OpenAI base URL (``http://host:8000/v1``); TGI's ``/generate``
            is at its root (the URL without a trailing ``/v1``).
        model: the served model's name (sent as ``model``; part of the cache key).
        template: renders messages into the prompt text (default :func:`chatml`).
        api_key: sent as a bearer token when given.
        timeout: seconds per request.
        form: ``vllm``, ``tgi`` or ``auto`` (the first request tries vLLM's, then TGI's).
        rate_limit: requests per second to this endpoint, shared by every client of it;
            None: no limit.
        retry: the retry policy (default :class:`~groundtrace.analyzer.llm.RetryPolicy`).
        client: an httpx client to use (tests inject transports).
        loop: the running event loop the shared rate limiter waits on; needed with
            ``rate_limit`` (the scorer runs in a worker thread, as the analysis runs it).

    Attributes:
        base_url: the base URL given, without a trailing ``/``.
        form: the form in use (``auto`` until the first request has probed the server).
        requests: HTTP attempts made (retries and probes included).
        retries: attempts after a retryable failure.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        template: ChatTemplate = chatml,
        api_key: str | None = None,
        timeout: float = 120.0,
        form: EndpointForm = "auto",
        rate_limit: float | None = None,
        retry: RetryPolicy | None = None,
        client: httpx.Client | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if rate_limit is not None and not rate_limit > 0:
            raise ValueError(f"rate_limit must be > 0 requests per second, got {rate_limit}")
        if rate_limit is not None and loop is None:
            raise ValueError(
                "rate_limit needs loop: the running event loop the shared limiter waits on "
                "(the scorer itself runs in a worker thread; the library starts no loop)"
            )
        self._loop = loop
        self.model = model
        self.form: EndpointForm = form
        self.requests = 0
        self.retries = 0
        root = self.base_url = base_url.rstrip("/")
        self._urls = {"vllm": root + "/completions", "tgi": root.removesuffix("/v1") + "/generate"}
        self._template = template
        self._retry = retry or RetryPolicy()
        self._limiter = None if rate_limit is None else ModelClient.shared_limiter(root, rate_limit)
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
            BackendUnavailableError: the server cannot be reached, refuses the request after
                the retries, or returns no prompt log-probabilities (the message says which
                URL and what it returned).
        """
        return [self._score(self._template(p) + prefix, answer) for p in prompts]

    def _score(self, prompt: str, answer: str) -> list[float]:
        if self.form != "auto":
            try:
                return self._ask(self.form, prompt, answer)
            except _Refused as exc:
                raise BackendUnavailableError(
                    f"{self.base_url} returns no prompt log-probabilities in the {self.form} "
                    f"form (endpoint_form {self.form}; auto probes vLLM's and TGI's): {exc}"
                ) from None
        reasons: list[str] = []
        for form in ("vllm", "tgi"):
            try:
                out = self._ask(form, prompt, answer)
            except _Refused as exc:
                reasons.append(f"{form} form: {exc}")
                continue
            self.form = form
            return out
        raise BackendUnavailableError(
            f"{self.base_url} returns no prompt log-probabilities in either form it was "
            "probed with (vLLM's /v1/completions with echo+logprobs, TGI's /generate with "
            "decoder_input_details): " + "; ".join(reasons)
        )

    def _ask(self, form: Literal["vllm", "tgi"], prompt: str, answer: str) -> list[float]:
        url, text = self._urls[form], prompt + answer
        if form == "vllm":
            body: dict[str, Any] = {
                "model": self.model, "prompt": text, "echo": True, "logprobs": 0,
                "max_tokens": 1, "temperature": 0.0,
            }  # fmt: skip
        else:
            body = {"inputs": text, "parameters": {
                "details": True, "decoder_input_details": True, "max_new_tokens": 1,
            }}  # fmt: skip
        reply = self._post(url, body)
        if not reply.is_success:
            raise _Refused(f"{url} answered {reply.status_code}: {reply.text[:200]}")
        try:
            data = reply.json()
            if form == "vllm":
                logprobs = data["choices"][0]["logprobs"] or {}
            else:
                if isinstance(data, list):  # TGI answers a list for a list of inputs
                    data = data[0]
                logprobs = prefill_logprobs(data["details"]["prefill"] or [], text)
            return answer_logprobs(logprobs, len(prompt), len(text))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _Refused(
                f"{url} returned no prompt log-probabilities for the answer "
                f"({type(exc).__name__}: {exc}); it returned: {reply.text[:200]}"
            ) from exc

    def _post(self, url: str, body: Mapping[str, Any]) -> httpx.Response:
        """``body`` posted to ``url``: each attempt started by the rate limiter, retried on
        408/429/5xx after the policy's delay; the last reply once the attempts are spent."""
        attempt = 0
        while True:
            attempt += 1
            if self._limiter is not None:
                self._wait(self._limiter.acquire())
            self.requests += 1
            if attempt > 1:
                self.retries += 1
            try:
                reply = self._client.post(url, json=body)
            except httpx.HTTPError as exc:
                raise BackendUnavailableError(f"cannot reach {url}: {exc}") from exc
            status = reply.status_code
            wait = self._retry.backoff(attempt, status, reply.headers.get("retry-after"), url)
            if wait is None:
                return reply
            if self._limiter is not None and status == 429:
                self._wait(self._limiter.pause(wait))  # every client of the endpoint waits
            time.sleep(wait)

    def _wait(self, step: Coroutine[Any, Any, None]) -> None:
        """Run a limiter step on the caller's event loop and wait for it in this thread."""
        assert self._loop is not None  # checked with rate_limit in __init__
        asyncio.run_coroutine_threadsafe(step, self._loop).result()

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
