"""Tier 2, endpoint: a server that returns prompt log-probabilities, in one of four forms.

* ``vllm-chat``: vLLM's ``POST /v1/chat/completions`` with its ``prompt_logprobs: 0``, the
  recorded messages followed by an assistant message holding the reply prefix and the
  answer, ``add_generation_prompt: false`` and ``continue_final_message: true``: the server
  renders the prompt with the served model's own chat template (tool calls included) and
  leaves the answer open; the top-level ``prompt_logprobs`` holds one entry per prompt
  token (as below);
* ``vllm``: vLLM's (OpenAI legacy) ``POST /v1/completions`` with ``echo: true`` and
  ``logprobs: 0``: ``choices[0].logprobs`` lists the prompt's tokens, then the generated one
  (``tokens``, ``token_logprobs``); ``usage.prompt_tokens`` says how many are the prompt's
  (without ``usage``, the tokens whose ``text_offset`` is inside the text sent);
* ``prompt-logprobs``: vLLM's own ``prompt_logprobs: 0`` parameter on the same endpoint:
  ``choices[0].prompt_logprobs`` holds one entry per prompt token, ``null`` for the first,
  else ``{token_id: {logprob, rank, decoded_token}}`` whose first entry is the prompt's own
  token (vLLM's echo form is built from these same values);
* ``tgi``: text-generation-inference's ``POST /generate`` with ``details`` and
  ``decoder_input_details`` returns the prefill tokens (``details.prefill``: ``text``,
  ``logprob``).

In the other forms the prompt sent is the chat-formatted prompt followed by the answer text,
formatted here. In every form the answer's tokens are found from the end of the prompt's
tokens (:func:`tail_logprobs`): the last tokens whose texts, decoded one token at a time,
cover the answer and spell the end of the text sent.
Neither a character split across byte-level tokens earlier in the prompt (each byte decodes
alone to U+FFFD, so vLLM's ``text_offset``, the running sum of those texts, drifts past the
text) nor leading special tokens move them; tokens whose texts do not spell the answer are
refused with that reason, never guessed. Outside the chat form, chat formatting happens here,
with the template of the served model (:func:`chatml` for Qwen-family models, or any
callable).

With ``form="auto"`` the first request probes the server in the order of :data:`FORMS`: the
chat form (the served model's own template) first, then the echo form, ``prompt_logprobs``
on completions, then TGI's; the first that returns the answer's log-probabilities is kept
for every later request (:attr:`EndpointScorer.form` names it on
every result). A server offering none (no echo, no prompt log-probabilities, an error, a
placeholder list) is refused with a :class:`~groundtrace.analyzer.errors.BackendUnavailableError`
naming each URL tried and what it returned -- never a silent 0 or NaN.

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

from ._config import EndpointForm
from ._scorer import Tier

__all__ = [
    "FORMS",
    "EndpointForm",
    "EndpointScorer",
    "chatml",
    "echo_tokens",
    "prefill_tokens",
    "prompt_logprobs_tokens",
    "tail_logprobs",
]

#: Renders chat messages into the prompt text the model reads before its answer.
ChatTemplate = Callable[[Sequence[Mapping[str, Any]]], str]
#: A form the server is asked in.
Form = Literal["vllm-chat", "vllm", "prompt-logprobs", "tgi"]
#: The forms, in the order ``auto`` probes them (the server's own chat template first).
FORMS: tuple[Form, ...] = ("vllm-chat", "vllm", "prompt-logprobs", "tgi")
#: Per prompt token: its text decoded alone (None: not given) and its log-probability.
Tokens = tuple[list[str | None], list[Any]]


def chatml(messages: Sequence[Mapping[str, Any]]) -> str:
    """The ChatML prompt (Qwen's template, no default system message) with the generation
    prompt ``<|im_start|>assistant\\n``."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def tail_logprobs(
    texts: Sequence[str | None], values: Sequence[Any], text: str, start: int
) -> list[float]:
    """The log-probabilities of the tokens covering ``text[start:]``, the prompt's last
    tokens: walking back from the last token until their texts reach ``start`` (a token
    straddling ``start`` is the answer's), whose texts must spell the end of ``text`` (or,
    when ``text`` is only the end of the prompt, end with all of it).

    Raises:
        ValueError: the tokens do not reach ``start`` (the prompt was not echoed), one has no
            text, their texts do not spell the end of ``text`` (a character split across
            tokens inside the answer, a tokenizer whose token texts lose characters), or an
            answer token has no finite log-probability.
    """
    covered, first = len(text), len(texts)
    while covered > start:
        first -= 1
        if first < 0:
            raise ValueError(f"its {len(texts)} prompt tokens' texts cover the last "
                             f"{len(text) - covered} characters, not the answer's "
                             f"{len(text) - start}: the prompt was not echoed")  # fmt: skip
        piece = texts[first]
        if piece is None:
            raise ValueError(f"prompt token {first} has no text to locate the answer by")
        covered -= len(piece)
    tail = "".join(t or "" for t in texts[first:])
    if not (text.endswith(tail) if len(tail) <= len(text) else tail.endswith(text)):
        raise ValueError(
            f"the texts of its last {len(texts) - first} tokens, decoded one at a time "
            f"({tail[-80:]!r}), do not spell the end of the text sent ({text[-80:]!r}): a "
            "character split across tokens, or token texts that lose characters; the "
            "answer's tokens cannot be located"
        )
    out: list[float] = []
    for index in range(first, len(texts)):
        value = values[index]
        if not isinstance(value, int | float) or not math.isfinite(float(value)):
            raise ValueError(f"the answer token {texts[index]!r} (prompt token {index}) has no "
                             f"log-probability (got {value!r})")  # fmt: skip
        out.append(float(value))
    return out


def _prompt_tokens(data: Mapping[str, Any]) -> int | None:
    usage = data.get("usage")
    count = usage.get("prompt_tokens") if isinstance(usage, Mapping) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def echo_tokens(data: Mapping[str, Any], text: str) -> Tokens:
    """The prompt's tokens of a completions reply with ``echo`` and ``logprobs``: the first
    ``usage.prompt_tokens`` of ``choices[0].logprobs`` (without ``usage``: those whose
    ``text_offset`` is inside ``text``; the rest are generated).

    Raises:
        ValueError: no ``tokens``/``token_logprobs`` lists, nothing to tell the prompt's
            tokens from the generated ones, or fewer tokens than the prompt has.
    """
    logprobs = data["choices"][0].get("logprobs") or {}
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise ValueError("logprobs has no tokens and token_logprobs lists of one length")
    count = _prompt_tokens(data)
    if count is None:
        offsets = logprobs.get("text_offset")
        if not isinstance(offsets, list) or len(offsets) != len(tokens):
            raise ValueError("neither usage.prompt_tokens nor logprobs.text_offset tells the "
                             "prompt's tokens from the generated one")  # fmt: skip
        count = sum(1 for offset in offsets if int(offset) < len(text))
    if count > len(tokens):
        raise ValueError(f"logprobs lists {len(tokens)} tokens for a prompt of {count}: the "
                         "prompt was not echoed")  # fmt: skip
    return [None if t is None else str(t) for t in tokens[:count]], values[:count]


def prompt_logprobs_tokens(data: Mapping[str, Any], *, chat: bool = False) -> Tokens:
    """The prompt's tokens of a reply with vLLM's ``prompt_logprobs``: per entry of
    ``choices[0].prompt_logprobs`` (completions) or of the top-level ``prompt_logprobs``
    (chat completions) its first (the prompt's own) token's ``decoded_token`` and
    ``logprob``; the first entry is ``null``.

    Raises:
        ValueError: no ``prompt_logprobs`` list (a server that ignores the parameter), fewer
            or more entries than ``usage.prompt_tokens`` (a placeholder such as ``[null]``),
            or an entry that is not ``{token_id: {logprob, decoded_token}}``.
    """
    entries = data.get("prompt_logprobs") if chat else data["choices"][0].get("prompt_logprobs")
    if not isinstance(entries, list):
        where = "prompt_logprobs" if chat else "choices[0].prompt_logprobs"
        raise ValueError(f"{where} is {entries!r}, not a list: the server ignores the "
                         "parameter")  # fmt: skip
    count = _prompt_tokens(data)
    if count is not None and len(entries) != count:
        raise ValueError(f"prompt_logprobs holds {len(entries)} entries for a prompt of {count} "
                         "tokens (usage.prompt_tokens)")  # fmt: skip
    texts: list[str | None] = []
    values: list[Any] = []
    for index, entry in enumerate(entries):
        if entry is None:
            texts.append(None)
            values.append(None)
            continue
        own = next(iter(entry.values()), None) if isinstance(entry, Mapping) else None
        if not isinstance(own, Mapping):
            raise ValueError(f"prompt_logprobs[{index}] is {entry!r}, not "
                             "{token_id: {logprob, decoded_token}}")  # fmt: skip
        token = own.get("decoded_token")
        texts.append(None if token is None else str(token))
        values.append(own.get("logprob"))
    return texts, values


def prefill_tokens(data: Any) -> Tokens:
    """The prompt's tokens of a TGI ``/generate`` reply with ``decoder_input_details``:
    ``details.prefill``'s ``text`` and ``logprob`` (a list reply: its first element)."""
    if isinstance(data, list):  # TGI answers a list for a list of inputs
        data = data[0]
    prefill = data["details"]["prefill"] or []
    return [None if t.get("text") is None else str(t["text"]) for t in prefill], [
        t.get("logprob") for t in prefill
    ]


class _Refused(Exception):
    """A form the server does not serve (why, with the URL), for the probe to try the next."""


class EndpointScorer:
    """Answer log-probabilities from a server's prompt log-probabilities (vLLM's chat,
    echo or ``prompt_logprobs`` form, or TGI's prefill form).

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
        form: ``vllm-chat`` (the server's chat template, ``prompt_logprobs``), ``vllm``
            (echo+logprobs), ``prompt-logprobs`` (``prompt_logprobs`` on completions), ``tgi``
            or ``auto`` (the first request tries them in that order, :data:`FORMS`).
        rate_limit: requests per second to this endpoint, shared by every client of it;
            None: no limit.
        retry: the retry policy (default :class:`~groundtrace.analyzer.llm.RetryPolicy`).
        client: an httpx client to use (tests inject transports).
        loop: the running event loop the shared rate limiter waits on; needed with
            ``rate_limit`` (the scorer runs in a worker thread, as the analysis runs it).

    Attributes:
        base_url: the base URL given, without a trailing ``/``.
        form: the form in use (``auto`` until a first request has probed the server).
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
        self._urls = {"vllm-chat": root + "/chat/completions", "vllm": root + "/completions",
                      "prompt-logprobs": root + "/completions",
                      "tgi": root.removesuffix("/v1") + "/generate"}  # fmt: skip
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
        return [self._score(p, prefix, answer) for p in prompts]

    def _score(
        self, messages: Sequence[Mapping[str, Any]], prefix: str, answer: str
    ) -> list[float]:
        if self.form != "auto":
            try:
                return self._ask(self.form, messages, prefix, answer)
            except _Refused as exc:
                raise BackendUnavailableError(
                    f"{self.base_url} returns no prompt log-probabilities in the {self.form} "
                    f"form (endpoint_form {self.form}; auto probes {', '.join(FORMS)}): {exc}"
                ) from None
        reasons: list[str] = []
        for form in FORMS:
            try:
                out = self._ask(form, messages, prefix, answer)
            except _Refused as exc:
                reasons.append(f"{form} form: {exc}")
                continue
            self.form = form
            return out
        raise BackendUnavailableError(
            f"{self.base_url} returns no prompt log-probabilities in any form it was probed "
            "with (vLLM's /v1/chat/completions and /v1/completions with prompt_logprobs or "
            "echo+logprobs, TGI's /generate with decoder_input_details): " + "; ".join(reasons)
        )

    def _ask(
        self, form: Form, messages: Sequence[Mapping[str, Any]], prefix: str, answer: str
    ) -> list[float]:
        url = self._urls[form]
        if form == "vllm-chat":  # the server's own template, the reply left open
            text, start = prefix + answer, len(prefix)
            body: dict[str, Any] = {
                "model": self.model, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0,
                "messages": [*messages, {"role": "assistant", "content": text}],
                "add_generation_prompt": False, "continue_final_message": True,
            }  # fmt: skip
        else:
            prompt = self._template(messages) + prefix
            text, start = prompt + answer, len(prompt)
        if form == "tgi":
            body = {"inputs": text, "parameters": {
                "details": True, "decoder_input_details": True, "max_new_tokens": 1,
            }}  # fmt: skip
        elif form != "vllm-chat":
            asked = {"echo": True, "logprobs": 0} if form == "vllm" else {"prompt_logprobs": 0}
            body = {"model": self.model, "prompt": text, **asked, "max_tokens": 1,
                    "temperature": 0.0}  # fmt: skip
        reply = self._post(url, body)
        if not reply.is_success:
            raise _Refused(f"{url} answered {reply.status_code}: {reply.text[:200]}")
        try:
            data = reply.json()
            if form == "vllm":
                texts, values = echo_tokens(data, text)
            elif form == "tgi":
                texts, values = prefill_tokens(data)
            else:
                texts, values = prompt_logprobs_tokens(data, chat=form == "vllm-chat")
            return tail_logprobs(texts, values, text, start)
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
