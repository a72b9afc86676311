"""The shared per-endpoint rate limit: spacing of calls, and a 429 pausing every client."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest

from groundtrace.analyzer.llm import ChatRequest, ModelClient, RetryPolicy
from groundtrace.analyzer.llm._limit import Bucket, limiter_for
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, default_handler


class FakeClock:
    """Monotonic seconds that move only when the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _request(text: str) -> ChatRequest:
    return ChatRequest(model="m", messages=({"role": "user", "content": text},))


def test_permits_are_spaced_one_interval_apart_with_no_burst() -> None:
    clock = FakeClock()
    bucket = Bucket(4.0, clock)
    slots = [bucket.reserve()[1] for _ in range(9)]
    assert [b - a for a, b in itertools.pairwise(slots)] == [0.25] * 8
    clock.now += 60.0  # idle for a minute: no permits pile up
    waits = [bucket.reserve()[0] for _ in range(3)]
    assert waits == [0.0, 0.25, 0.5]


def test_a_pause_holds_back_permits_already_granted() -> None:
    clock = FakeClock()
    bucket = Bucket(1.0, clock)
    wait, slot = bucket.reserve()
    assert wait == 0.0
    wait, slot = bucket.reserve()  # the next permit, one second on
    assert wait == pytest.approx(1.0)
    bucket.pause(5.0)  # a 429 seen by another client
    assert not bucket.clear(slot)
    wait, _ = bucket.reserve()
    assert wait == pytest.approx(5.0)


def test_bad_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="rate"):
        Bucket(0.0)
    with pytest.raises(ValueError, match="rate_limit"):
        ModelClient("http://127.0.0.1:9/v1", rate_limit=-1.0)


def test_clients_of_one_endpoint_share_a_bucket() -> None:
    a = limiter_for("http://127.0.0.1:1/v1", 3.0)
    b = limiter_for("http://127.0.0.1:1/v1", 3.0)
    other = limiter_for("http://127.0.0.1:2/v1", 3.0)
    assert a._bucket is b._bucket and a._bucket is not other._bucket


def test_observed_rate_across_clients_stays_within_the_limit(tmp_path: Path) -> None:
    stamps: list[float] = []

    def handler(req: ServerRequest) -> Reply:
        stamps.append(time.monotonic())
        return default_handler(req)

    rate, n = 10.0, 21
    with OpenAICompatServer(handler=handler) as srv:
        clients = [
            ModelClient(srv.base_url, concurrency=8, timeout=10.0, rate_limit=rate)
            for _ in range(3)
        ]

        async def main() -> None:
            for c in clients:  # connections set up first: their latency is not the limiter's
                await c.complete(_request("warm-up"))
            stamps.clear()
            await asyncio.gather(*(clients[i % 3].complete(_request(f"q{i}")) for i in range(n)))
            for c in clients:
                await c.aclose()

        asyncio.run(main())
    assert len(stamps) == n
    observed = (n - 1) / (max(stamps) - min(stamps))
    assert observed <= rate * 1.1, observed
    assert sum(c.stats.completed for c in clients) == n + 3  # and the warm-ups


def test_a_429_pauses_every_client_of_the_endpoint(tmp_path: Path) -> None:
    arrivals: list[tuple[str, float]] = []
    pause = 0.8

    def handler(req: ServerRequest) -> Reply:
        text = req.body["messages"][-1]["content"]
        arrivals.append((text, time.monotonic()))
        if req.index == 0:
            return Reply(status=429, retry_after=pause)
        return default_handler(req)

    with OpenAICompatServer(handler=handler) as srv:
        retry = RetryPolicy(max_attempts=3, base_delay=0.01)
        first = ModelClient(srv.base_url, timeout=10.0, rate_limit=2.0, retry=retry)
        second = ModelClient(srv.base_url, timeout=10.0, rate_limit=2.0, retry=retry)

        async def main() -> None:
            done = await asyncio.gather(
                first.complete(_request("a")),
                second.complete(_request("b")),
                second.complete(_request("c")),
            )
            assert all(r.ok for r in done)
            await first.aclose()
            await second.aclose()

        asyncio.run(main())
    limited = arrivals[0][1]
    later = [t for text, t in arrivals[1:] if text in ("b", "c")]
    assert len(later) == 2
    # without the shared pause "b" would have come 0.5 s after the first call
    assert min(later) >= limited + pause - 0.05
    assert first.stats.retries == 1 and second.stats.retries == 0
