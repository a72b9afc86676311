"""``--estimate``: how many calls a run would make, how many the cache answers, what it costs.

Nothing is sent: the requests a run would make are looked up in the call cache by key. A
command that can list its requests up front passes them to :func:`estimate_calls`; one whose
later requests depend on earlier replies (the audit's pairs on its answers) runs its own
request path with a :class:`RequestRecorder`, which answers from the cache what it can and
records every request instead of sending it. Input tokens are approximated as characters / 4
of the messages; output tokens as each request's ``max_tokens`` (an upper bound), so the cost
is an estimate from above on output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import msgspec

from ._budget import PriceTable
from ._cache import CallCache
from ._client import ModelClient
from ._types import CallFailure, CallResult, ChatRequest, FailureKind, cache_key

__all__ = ["Estimate", "RequestRecorder", "estimate_calls"]

#: Characters per input token of the approximation.
CHARS_PER_TOKEN = 4


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """What a run would cost, computed without calling the model.

    Attributes:
        requests: model requests the run would make.
        distinct: distinct requests among them (identical ones are made once).
        cached: distinct requests the call cache already answers (no call, no cost).
        calls: calls the run would make (``distinct - cached``; retries not counted).
        prompt_tokens: approximate input tokens of those calls (characters / 4).
        completion_tokens: output tokens at most (the calls' ``max_tokens``), None when a
            call has no ``max_tokens``.
        cost_usd: estimated cost from the price table, None without one or without a bound
            on output tokens.
        prices: the price table's file, if any.
        units_done: work units the run's journal already holds (they make no request).
        dependent: further calls, at most, that depend on replies not made yet (e.g. the
            audit's pair labels of answers still to come); not in ``calls`` nor the cost.
    """

    requests: int
    distinct: int
    cached: int
    calls: int
    prompt_tokens: int
    completion_tokens: int | None
    cost_usd: float | None
    prices: str | None
    units_done: int = 0
    dependent: int = 0

    def text(self) -> str:
        """The estimate as the command prints it."""
        cost = "unknown (no price table)" if self.prices is None else (
            "unknown (a request has no max_tokens)" if self.cost_usd is None
            else f"{self.cost_usd:.6f} USD (output priced at max_tokens; input ≈ chars/4)"
        )  # fmt: skip
        output = "unbounded" if self.completion_tokens is None else f"<= {self.completion_tokens}"
        done = f"units already done (journal): {self.units_done}\n" if self.units_done else ""
        later = (
            f"then up to {self.dependent} more calls that depend on those replies (not priced)\n"
            if self.dependent else ""
        )  # fmt: skip
        return (
            f"{done}model requests: {self.requests} ({self.distinct} distinct)\n"
            f"answered by the cache: {self.cached}\n"
            f"model calls to make: {self.calls}\n{later}"
            f"tokens: ~{self.prompt_tokens} in, {output} out\n"
            f"estimated cost: {cost}\n"
        )


def estimate_calls(
    requests: Sequence[ChatRequest],
    cache: CallCache | None,
    prices: PriceTable | None,
    *,
    units_done: int = 0,
    dependent: int = 0,
) -> Estimate:
    """The :class:`Estimate` of ``requests`` against ``cache`` (looked up, never called).

    ``units_done`` and ``dependent`` are recorded as given (see :class:`Estimate`).

    Raises:
        ConfigError: the price table has no price for a model the calls use.
    """
    distinct = {cache_key(r): r for r in requests}
    todo = [r for key, r in distinct.items() if cache is None or cache.get(key) is None]
    prompt = {r.model: 0 for r in todo}
    output: dict[str, int] | None = {r.model: 0 for r in todo}
    for r in todo:
        chars = len(json.dumps(list(r.messages), ensure_ascii=False))
        prompt[r.model] += math.ceil(chars / CHARS_PER_TOKEN)
        if output is not None:
            if r.max_tokens is None:
                output = None
            else:
                output[r.model] += r.max_tokens
    cost = None
    if prices is not None and output is not None:
        cost = sum(prices.price(m).cost(prompt[m], output[m]) for m in prompt)
    return Estimate(
        requests=len(requests),
        distinct=len(distinct),
        cached=len(distinct) - len(todo),
        calls=len(todo),
        prompt_tokens=sum(prompt.values()),
        completion_tokens=None if output is None else sum(output.values()),
        cost_usd=None if cost is None else round(cost, 6),
        prices=None if prices is None else prices.source,
        units_done=units_done,
        dependent=dependent,
    )


class RequestRecorder(ModelClient):
    """A model client that sends nothing: ``--estimate`` runs a command's request path with it.

    Every request is recorded in :attr:`seen`. One the cache answers gets its cached reply, so
    the analysis goes on exactly as the run would from there; any other gets a
    ``not_sent`` :class:`CallFailure` (0 attempts), which the analysis treats as a failed
    call.

    Args:
        base_url: the endpoint the run would call (names the client, never contacted).
        cache: the run's call cache, if it exists.
    """

    def __init__(self, base_url: str, cache: CallCache | None) -> None:
        super().__init__(base_url, cache=cache)
        self.seen: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> CallResult:
        """The cached reply of ``request``, else a ``not_sent`` failure; records it."""
        self.seen.append(request)
        key = cache_key(request)
        hit = None if self.cache is None else self.cache.get(key)
        if hit is not None:
            return hit
        return CallFailure(FailureKind.NOT_SENT, "not sent (--estimate)", key, attempts=0)
