"""One call per distinct request across every client sharing a call cache (a cluster's
workers, two runs into one folder), and the spacing of call starts on a busy event loop.

Two clients with their own :class:`CallCache` on one file stand for two processes: nothing in
memory is shared between them, only the sqlite file, as between two workers.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from groundtrace.analyzer.llm import CallCache, ChatRequest, ChatResponse, ModelClient, RetryPolicy
from groundtrace.analyzer.llm._limit import LATE, Bucket, RateLimiter
from groundtrace.analyzer.llm._types import CallResult, cache_key
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

pytestmark = pytest.mark.timeout(60)

RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02, seed=7)


def _request(text: str) -> ChatRequest:
    return ChatRequest(model="m", messages=({"role": "user", "content": text},))


def _numbered(delay: float, status: int = 200) -> Callable[[ServerRequest], Reply]:
    """A handler numbering its answers (a sampling model: every call may answer differently)."""
    answered = itertools.count()
    lock = threading.Lock()

    def handler(req: ServerRequest) -> Reply:
        with lock:
            n = next(answered)
        if status != 200:
            return Reply(status=status, delay=delay)
        return Reply(content=f"{last_user_text(req)} #{n}", delay=delay)

    return handler


def _clients(srv: OpenAICompatServer, path: Path, n: int = 2) -> list[ModelClient]:
    return [
        ModelClient(srv.base_url, cache=CallCache(path), timeout=10.0, retry=RETRY)
        for _ in range(n)
    ]


def test_identical_requests_of_two_processes_make_one_call(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=_numbered(0.4)) as srv:
        first, second = _clients(srv, tmp_path / "llm_cache.sqlite")

        async def both() -> list[CallResult]:
            ask = _request("same question")
            return list(await asyncio.gather(first.complete(ask), second.complete(ask)))

        a, b = asyncio.run(both())
        assert srv.request_count == 1
    assert isinstance(a, ChatResponse) and isinstance(b, ChatResponse)
    assert a.text == b.text == "same question #0"
    # the waiter's answer is the call made for it, not a cache hit of an earlier run
    assert not b.cached and b.attempts == a.attempts == 1
    counts = [first.stats.snapshot(), second.stats.snapshot()]
    assert sorted(c.coalesced for c in counts) == [0, 1]
    assert sum(c.api_calls for c in counts) == 1 and sum(c.cache_hits for c in counts) == 0


def test_the_claim_of_a_process_that_died_expires(tmp_path: Path) -> None:
    path = tmp_path / "llm_cache.sqlite"
    ask = _request("left behind")
    # a worker claimed the call and was killed before it answered: it never renews the claim
    state, _ = CallCache(path).claim(cache_key(ask), "killed-worker", time.time(), lease=0.5)
    assert state == "mine"
    with OpenAICompatServer(handler=_numbered(0.0)) as srv:
        (client,) = _clients(srv, path, 1)
        result = asyncio.run(client.complete(ask))
        assert srv.request_count == 1
    assert isinstance(result, ChatResponse) and result.text == "left behind #0"
    assert client.stats.completed == 1 and client.stats.coalesced == 0


def test_a_failed_call_answers_its_waiters_and_a_later_asker_calls_again(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=_numbered(0.4, status=400)) as srv:
        first, second, later = _clients(srv, tmp_path / "llm_cache.sqlite", 3)
        ask = _request("refused")

        async def both() -> list[CallResult]:
            return list(await asyncio.gather(first.complete(ask), second.complete(ask)))

        results = asyncio.run(both())
        assert srv.request_count == 1
        assert [r.ok for r in results] == [False, False]
        assert first.stats.failures["http_error"] + second.stats.failures["http_error"] == 1
        # failures are not cached: a later run asks again
        again = asyncio.run(later.complete(ask))
        assert not again.ok and srv.request_count == 2


def test_starts_a_busy_loop_made_late_are_not_crowded_together() -> None:
    rate = 10.0
    limiter = RateLimiter(rate, Bucket(rate, time.monotonic))
    starts: list[float] = []

    async def call() -> None:
        await limiter.acquire()
        starts.append(time.monotonic())

    async def run() -> None:
        async def block() -> None:
            await asyncio.sleep(0)
            time.sleep(0.35)  # the loop is busy past the next two starts' times

        await asyncio.gather(call(), call(), call(), block())

    asyncio.run(run())
    gaps = [b - a for a, b in itertools.pairwise(sorted(starts))]
    # the two starts the busy loop made late were asked for again, one interval apart
    assert min(gaps) >= (1 - LATE) / rate
    assert limiter.late_starts >= 2
