"""The shared asynchronous OpenAI-compatible client: cache, concurrency bound, retries."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx2
import msgspec

from ._cache import LEASE, CallCache
from ._ledger import record_call
from ._limit import RateLimiter, limiter_for
from ._retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after
from ._types import CallFailure, CallResult, ChatRequest, ChatResponse, FailureKind, cache_key

__all__ = ["ClientCounts", "ClientStats", "ModelClient", "absorb_counts", "take_counts"]

_log = logging.getLogger(__name__)

#: Sent when the endpoint needs no key (local servers); the openai client insists on one.
PLACEHOLDER_API_KEY = "not-needed"
#: Seconds between looks at the cache while another process makes the same call (doubling).
POLL = 0.02
MAX_POLL = 0.5


class ClientCounts(msgspec.Struct, frozen=True, kw_only=True):
    """A snapshot of :class:`ClientStats`, as stored in judge and intervention results.

    Attributes are those of :class:`ClientStats`; ``failures`` is sorted by kind and
    ``backoff_seconds`` rounded to milliseconds.
    """

    requests: int
    cache_hits: int
    coalesced: int
    api_calls: int
    retries: int
    completed: int
    failures: dict[str, int]
    backoff_seconds: float


@dataclass(slots=True)
class ClientStats:
    """Counters of one client's work (what a report shows about cost).

    Attributes:
        requests: calls asked of the client.
        cache_hits: requests served from the cache with no call made.
        coalesced: requests that waited for an identical call already in flight.
        api_calls: HTTP attempts made (retries included).
        retries: attempts after the first one.
        completed: requests that ended in a response from the endpoint.
        failures: failed requests by :class:`FailureKind` value.
        backoff_seconds: total time waited between attempts.
    """

    requests: int = 0
    cache_hits: int = 0
    coalesced: int = 0
    api_calls: int = 0
    retries: int = 0
    completed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    backoff_seconds: float = 0.0

    def snapshot(self) -> ClientCounts:
        """The counters as they stand now, as the record a result stores."""
        return ClientCounts(
            requests=self.requests,
            cache_hits=self.cache_hits,
            coalesced=self.coalesced,
            api_calls=self.api_calls,
            retries=self.retries,
            completed=self.completed,
            failures=dict(sorted(self.failures.items())),
            backoff_seconds=round(self.backoff_seconds, 3),
        )

    def add(self, counts: ClientCounts) -> None:
        """Add counters made elsewhere (another process running this client's calls)."""
        self.requests += counts.requests
        self.cache_hits += counts.cache_hits
        self.coalesced += counts.coalesced
        self.api_calls += counts.api_calls
        self.retries += counts.retries
        self.completed += counts.completed
        self.failures.update(counts.failures)
        self.backoff_seconds += counts.backoff_seconds


#: Clients made here by identity token, and the copies unpickled here (from another process).
_ORIGINALS: weakref.WeakValueDictionary[str, ModelClient] = weakref.WeakValueDictionary()
_COPIES: weakref.WeakValueDictionary[str, ModelClient] = weakref.WeakValueDictionary()


def take_counts() -> dict[str, ClientCounts]:
    """Counters of the client copies in this process since the last call, by token (reset).

    A cluster worker sends these back with each result; the driver passes them to
    :func:`absorb_counts`, which adds them to the original clients.
    """
    out: dict[str, ClientCounts] = {}
    nothing = ClientStats().snapshot()
    for token, client in list(_COPIES.items()):
        counts = client.stats.snapshot()
        if counts != nothing:  # a request counted before the last take may end after it
            out[token] = counts
            client.stats = ClientStats()
    return out


def absorb_counts(counts: dict[str, ClientCounts]) -> None:
    """Add a worker's :func:`take_counts` to the original clients with the same tokens."""
    for token, delta in counts.items():
        client = _ORIGINALS.get(token)
        if client is not None:
            client.stats.add(delta)


class ModelClient:
    """Chat completions against any OpenAI-compatible endpoint, economically and safely.

    Every request goes through: the content-addressed cache (a completed call is never made
    twice), coalescing of identical in-flight requests (in this process, and through a claim
    in the cache across every process that shares it: a cluster's workers, two runs into one
    folder; see :meth:`CallCache.claim`), a semaphore bounding concurrent calls,
    a per-call timeout, and retries with seeded exponential backoff on 429/5xx, timeouts and
    connection errors (``Retry-After`` honoured). A call that still fails is returned as a
    :class:`CallFailure`, never raised.

    A client pickles as its settings (cache path, key and token included, not the HTTP
    client), so a cluster worker rebuilds an equivalent client whose counters
    :func:`take_counts` reports back to this one.

    Fails fast when the endpoint goes away (a model server that died refuses every
    connection): after a connection error only that request retries while the others wait;
    if it succeeds they go on, and once it has used all its attempts on connection errors the
    client holds the endpoint for gone and every waiting or later request returns a
    ``connection`` failure at once, without calling, instead of each waiting out its own
    backoff.

    Args:
        base_url: endpoint root, e.g. ``http://127.0.0.1:8080/v1``.
        api_key: bearer key; a placeholder is sent when None.
        cache: where completed calls are stored; None disables caching.
        concurrency: maximum calls in flight.
        timeout: seconds per HTTP attempt.
        retry: retry policy (its seed drives the jitter).
        http_client: an ``httpx2.AsyncClient`` (the openai client's HTTP library) to use;
            tests inject a ``httpx2.MockTransport``.
        rate_limit: calls per second to this endpoint, shared by every client of it (every
            worker of a cluster); a 429 then pauses all of them until its ``Retry-After``.
            None: no limit (a 429 is retried by this client alone).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        cache: CallCache | None = None,
        concurrency: int = 4,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        http_client: httpx2.AsyncClient | None = None,
        rate_limit: float | None = None,
        token: str | None = None,
    ) -> None:
        # token: set only when a pickled client is rebuilt (a copy reporting to its original)
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if rate_limit is not None and not rate_limit > 0:
            raise ValueError(f"rate_limit must be > 0 calls per second, got {rate_limit}")
        self.rate_limit = rate_limit
        self.base_url = base_url
        self.cache = cache
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.stats = ClientStats()
        self.token = token or uuid.uuid4().hex
        self._api_key = api_key
        (_ORIGINALS if token is None else _COPIES)[self.token] = self
        import openai  # here, not at import: the openai package costs ~1 s to load

        self._openai = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )
        self._semaphore: asyncio.Semaphore | None = None
        self._limiter: RateLimiter | None = None
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}
        # Fail fast: the endpoint's last connection error once a request used all its
        # attempts on them; while one request retries a refused connection, the others wait.
        self._gone: str | None = None
        self._probe_owner: object | None = None
        self._probe = asyncio.Event()

    def __reduce__(self) -> tuple[Any, ...]:
        settings = {
            "api_key": self._api_key, "cache": self.cache, "concurrency": self.concurrency,
            "timeout": self.timeout, "retry": self.retry, "token": self.token,
            "rate_limit": self.rate_limit,
        }  # fmt: skip
        return (_rebuild, (self.base_url, settings))

    async def complete(self, request: ChatRequest) -> CallResult:
        """One chat completion: cached, coalesced, bounded and retried."""
        self.stats.requests += 1
        key = cache_key(request)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        pending = self._inflight.get(key)
        if pending is not None:
            self.stats.coalesced += 1
            return await asyncio.shield(pending)
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result, waited = await self._call_once(request, key)
            future.set_result(result)
        except BaseException as exc:  # cancellation must not strand coalesced waiters
            future.set_exception(exc)
            raise
        finally:
            del self._inflight[key]
        if waited:
            self.stats.coalesced += 1
        elif isinstance(result, ChatResponse):
            self.stats.completed += 1
        else:
            self.stats.failures[result.kind.value] += 1
        return result

    async def _call_once(self, request: ChatRequest, key: str) -> tuple[CallResult, bool]:
        """The call of ``key`` made once by every process sharing the cache: (result, whether
        another process made it while this one waited)."""
        cache = self.cache
        if cache is None:
            return await self._call_with_retries(request, key), False
        owner, asked, poll = uuid.uuid4().hex, time.time(), POLL
        while True:
            state, found = cache.claim(key, owner, asked)
            if state == "mine":
                break
            if found is not None:
                return found, True
            await asyncio.sleep(poll)  # another process is making this call
            poll = min(2 * poll, MAX_POLL)
        renewing = asyncio.ensure_future(_renew(cache, key, owner))
        try:
            result = await self._call_with_retries(request, key)
        except BaseException:
            cache.release(key, owner)
            raise
        finally:
            renewing.cancel()
        if isinstance(result, ChatResponse):
            meta = {"base_url": self.base_url, "request": request.canonical()}
            cache.put(result, meta, owner)
        else:
            cache.fail(result, owner)
        return result, False

    async def complete_many(self, requests: list[ChatRequest]) -> list[CallResult]:
        """Run ``requests`` concurrently (bounded); results in the same order."""
        return list(await asyncio.gather(*(self.complete(r) for r in requests)))

    async def aclose(self) -> None:
        """Close the HTTP client (the cache stays open; close it separately)."""
        await self._openai.close()

    @staticmethod
    def shared_limiter(base_url: str, rate: float) -> RateLimiter:
        """The rate limiter every client of ``base_url`` shares (this process's schedule, or
        the cluster's), asking for ``rate`` starts a second: for callers that send their own
        HTTP requests to the endpoint (``await limiter.acquire()`` before each attempt,
        ``await limiter.pause(seconds)`` on a 429)."""
        return limiter_for(base_url, rate)

    def _bound(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
        return self._semaphore

    async def _call_with_retries(self, request: ChatRequest, key: str) -> CallResult:
        token = object()
        try:
            return await self._retry_loop(request, key, token)
        finally:
            if self._probe_owner is token:  # let the waiting requests go on
                self._probe_owner = None
                self._probe.set()

    async def _retry_loop(self, request: ChatRequest, key: str, token: object) -> CallResult:
        attempt = 0
        while True:
            if self._probe_owner not in (None, token):
                await self._probe.wait()
                continue
            async with self._bound():
                if self._gone is not None:
                    return CallFailure(
                        FailureKind.CONNECTION,
                        f"not attempted: {self.base_url} stopped accepting connections "
                        f"({self._gone})",
                        key,
                        attempts=attempt,
                    )
                if self._probe_owner not in (None, token):
                    continue
                attempt += 1
                limiter = self._shared_limiter()
                if limiter is not None:
                    await limiter.acquire()
                self.stats.api_calls += 1
                if attempt > 1:
                    self.stats.retries += 1
                result, retry_after = await self._attempt(request, key, attempt)
                record_call(request.model, result)
            if isinstance(result, ChatResponse) or not _retryable(result):
                return result
            if result.kind is FailureKind.CONNECTION and self._probe_owner is None:
                # this request alone retries; the others wait for its outcome
                self._probe_owner = token
                self._probe = asyncio.Event()
            if attempt >= self.retry.max_attempts:
                if result.kind is FailureKind.CONNECTION:
                    self._gone = result.message
                return result
            wait = self.retry.delay(attempt, retry_after, key)
            if limiter is not None and result.status == 429:
                await limiter.pause(wait)  # every client of the endpoint waits
            _log.debug("retrying %s after %s (%.2fs)", key[:12], result.kind, wait)
            self.stats.backoff_seconds += wait
            await asyncio.sleep(wait)

    def _shared_limiter(self) -> RateLimiter | None:
        if self.rate_limit is not None and self._limiter is None:
            self._limiter = limiter_for(self.base_url, self.rate_limit)
        return self._limiter

    async def _attempt(
        self, request: ChatRequest, key: str, attempt: int
    ) -> tuple[CallResult, float | None]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": list(request.messages),
            "temperature": request.temperature,
            "seed": request.seed,
            **request.params,
        }
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        import openai  # loaded by __init__

        try:
            completion = await self._openai.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            return CallFailure(FailureKind.TIMEOUT, str(exc), key, attempts=attempt), None
        except openai.APIConnectionError as exc:
            return CallFailure(FailureKind.CONNECTION, str(exc), key, attempts=attempt), None
        except openai.APIStatusError as exc:
            failure = CallFailure(
                FailureKind.HTTP_ERROR,
                f"HTTP {exc.status_code}: {exc.message}",
                key,
                status=exc.status_code,
                attempts=attempt,
                raw=exc.response.text[:4000],
            )
            return failure, parse_retry_after(exc.response.headers.get("retry-after"))
        except Exception as exc:  # foreign parse/validation errors: mapped at the boundary
            message = f"{type(exc).__name__}: {exc}"
            return CallFailure(FailureKind.INVALID_RESPONSE, message, key, attempts=attempt), None
        return _to_response(completion, key, attempt), None


async def _renew(cache: CallCache, key: str, owner: str) -> None:
    """Keep ``owner``'s claim of ``key`` live while its call runs (until cancelled)."""
    while True:
        await asyncio.sleep(LEASE / 3)
        cache.renew(key, owner)


def _rebuild(base_url: str, settings: dict[str, Any]) -> ModelClient:
    return ModelClient(base_url, **settings)


def _retryable(failure: CallFailure) -> bool:
    if failure.kind in (FailureKind.TIMEOUT, FailureKind.CONNECTION):
        return True
    return failure.kind is FailureKind.HTTP_ERROR and failure.status in RETRYABLE_STATUS


def _to_response(completion: Any, key: str, attempt: int) -> CallResult:
    """Map an openai ``ChatCompletion`` to a response, or an ``invalid_response`` failure."""
    choices = getattr(completion, "choices", None)
    choices = choices if isinstance(choices, list) else []
    text = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
    if not choices or not isinstance(text, str):
        why = "first choice has no text content" if choices else "response has no choices"
        raw = str(completion)[:4000]
        return CallFailure(FailureKind.INVALID_RESPONSE, why, key, attempts=attempt, raw=raw)
    usage_obj = getattr(completion, "usage", None)
    usage: dict[str, int] = {}
    if usage_obj is not None:
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage_obj, name, None)
            if isinstance(value, int):
                usage[name] = value
    return ChatResponse(
        text=text,
        finish_reason=getattr(choices[0], "finish_reason", None),
        model=getattr(completion, "model", None),
        usage=usage,
        key=key,
        cached=False,
        attempts=attempt,
    )
