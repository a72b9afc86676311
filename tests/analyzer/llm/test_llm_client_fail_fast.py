"""The model client gives up at once on an endpoint that stopped accepting connections."""

from __future__ import annotations

from pathlib import Path

from groundtrace.analyzer.llm import (
    CallCache,
    CallFailure,
    ChatRequest,
    ChatResponse,
    FailureKind,
    ModelClient,
    RetryPolicy,
)
from tests.support.openai_server import OpenAICompatServer

RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02, seed=1)


def _req(text: str) -> ChatRequest:
    return ChatRequest(model="m", messages=({"role": "user", "content": text},))


def _dead_url() -> str:
    with OpenAICompatServer() as srv:
        return srv.base_url  # the server is gone: every connection to its port is refused


async def test_dead_endpoint_is_given_up_after_one_exhausted_retry(tmp_path: Path) -> None:
    base_url = _dead_url()
    client = ModelClient(base_url, cache=CallCache(tmp_path / "cache.sqlite"), retry=RETRY)
    results = [await client.complete(_req(f"q{i}")) for i in range(10)]
    await client.aclose()

    assert all(isinstance(r, CallFailure) for r in results)
    assert {r.kind for r in results if isinstance(r, CallFailure)} == {FailureKind.CONNECTION}
    assert client.stats.api_calls == RETRY.max_attempts  # the first request's attempts only
    later = results[1:]
    assert all(isinstance(r, CallFailure) and r.attempts == 0 for r in later)
    assert base_url in later[0].message and "not attempted" in later[0].message
    assert client.stats.failures == {"connection": 10}


async def test_requests_in_flight_stop_retrying_once_the_endpoint_is_gone() -> None:
    client = ModelClient(_dead_url(), concurrency=2, retry=RETRY)
    results = await client.complete_many([_req(f"q{i}") for i in range(12)])
    await client.aclose()

    assert client.stats.failures == {"connection": 12}
    assert any(isinstance(r, CallFailure) and "not attempted" in r.message for r in results)
    # the two first attempts in flight, then one request's retries
    assert client.stats.api_calls <= 2 + RETRY.max_attempts - 1
    assert sum(1 for r in results if isinstance(r, CallFailure) and r.attempts == 0) >= 10


async def test_a_retried_server_error_does_not_give_the_endpoint_up() -> None:
    from tests.support.openai_server import Reply, ServerRequest, default_handler

    calls: list[str] = []

    def handler(req: ServerRequest) -> Reply:
        calls.append("x")
        return Reply(status=503) if len(calls) == 1 else default_handler(req)

    with OpenAICompatServer(handler=handler) as srv:
        client = ModelClient(srv.base_url, concurrency=2, retry=RETRY)
        results = await client.complete_many([_req(f"q{i}") for i in range(6)])
        await client.aclose()
    assert all(isinstance(r, ChatResponse) for r in results)
    assert client.stats.failures == {}
