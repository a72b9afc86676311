"""The shared model client against a real local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import httpx2
import msgspec
import pytest

from groundtrace.analyzer.interventions._records import CallCounts
from groundtrace.analyzer.llm import (
    CallCache,
    CallFailure,
    ChatRequest,
    ChatResponse,
    FailureKind,
    ModelClient,
    RetryPolicy,
)
from groundtrace.analyzer.llm._types import cache_key
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, seed=7)


def _req(text: str, model: str = "m") -> ChatRequest:
    return ChatRequest(model=model, messages=({"role": "user", "content": text},), seed=3)


def _client(srv: OpenAICompatServer, tmp_path: Path, **kwargs: object) -> ModelClient:
    kwargs.setdefault("retry", FAST_RETRY)
    return ModelClient(
        srv.base_url,
        cache=CallCache(tmp_path / "llm_cache.sqlite"),
        **kwargs,  # type: ignore[arg-type]
    )


def test_cache_serves_every_completed_call_on_rerun(tmp_path: Path) -> None:
    requests = [_req(f"q{i}") for i in range(6)]
    with OpenAICompatServer() as srv:
        first = _client(srv, tmp_path)
        out = asyncio.run(first.complete_many(requests))
        assert [r.text for r in out if isinstance(r, ChatResponse)] == [
            f"echo: q{i}" for i in range(6)
        ]
        assert first.stats.api_calls == 6 and first.stats.cache_hits == 0
        assert len(srv.requests) == 6
        # A new client (a re-run) on the same cache file makes zero calls.
        second = _client(srv, tmp_path)
        again = asyncio.run(second.complete_many(requests))
        assert len(srv.requests) == 6
        assert second.stats.api_calls == 0 and second.stats.cache_hits == 6
        assert all(isinstance(r, ChatResponse) and r.cached for r in again)
        assert [r.text for r in again if isinstance(r, ChatResponse)] == [
            r.text for r in out if isinstance(r, ChatResponse)
        ]


def test_request_parameters_are_sent_and_recorded(tmp_path: Path) -> None:
    fmt = {"type": "json_object", "schema": {"type": "object"}}
    request = ChatRequest(
        model="m", messages=({"role": "user", "content": "x"},), seed=11, response_format=fmt
    )
    with OpenAICompatServer() as srv:
        client = _client(srv, tmp_path)
        result = asyncio.run(client.complete(request))
        assert isinstance(result, ChatResponse)
        body = srv.requests[0].body
        assert body["temperature"] == 0.0 and body["seed"] == 11
        assert body["response_format"] == fmt
        assert result.key == cache_key(request)
        assert result.usage["completion_tokens"] == 2


def test_cache_key_ignores_endpoint_but_not_parameters() -> None:
    base = _req("same")
    assert cache_key(base) == cache_key(_req("same"))
    assert cache_key(base) != cache_key(_req("other"))
    assert cache_key(base) != cache_key(_req("same", model="m2"))
    changed = ChatRequest(model="m", messages=base.messages, seed=4)
    assert cache_key(base) != cache_key(changed)


def test_concurrency_bound_is_respected(tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def handler(req: ServerRequest) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Reply(content=last_user_text(req))

    with OpenAICompatServer(handler=handler) as srv:
        client = _client(srv, tmp_path, concurrency=2)
        out = asyncio.run(client.complete_many([_req(f"c{i}") for i in range(10)]))
    assert all(isinstance(r, ChatResponse) for r in out)
    assert state["peak"] == 2


def test_identical_inflight_requests_make_one_call(tmp_path: Path) -> None:
    def handler(req: ServerRequest) -> Reply:
        time.sleep(0.05)
        return Reply(content="once")

    with OpenAICompatServer(handler=handler) as srv:
        client = _client(srv, tmp_path, concurrency=4)
        out = asyncio.run(client.complete_many([_req("dup")] * 5))
        assert len(srv.requests) == 1
    assert [r.text for r in out if isinstance(r, ChatResponse)] == ["once"] * 5
    assert client.stats.coalesced == 4


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retry_on_transient_status_then_success(tmp_path: Path, status: int) -> None:
    seen: list[int] = []

    def handler(req: ServerRequest) -> Reply:
        seen.append(req.index)
        return Reply(status=status) if len(seen) <= 2 else Reply(content="finally")

    with OpenAICompatServer(handler=handler) as srv:
        client = _client(srv, tmp_path)
        result = asyncio.run(client.complete(_req("r")))
    assert isinstance(result, ChatResponse)
    assert result.text == "finally" and result.attempts == 3
    assert client.stats.api_calls == 3 and client.stats.retries == 2


def test_client_error_is_not_retried_and_becomes_a_typed_failure(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=lambda req: Reply(status=400, error_message="bad")) as srv:
        client = _client(srv, tmp_path)
        result = asyncio.run(client.complete(_req("x")))
        assert len(srv.requests) == 1
    assert isinstance(result, CallFailure)
    assert result.kind is FailureKind.HTTP_ERROR and result.status == 400
    assert "bad" in (result.raw or "")
    assert client.stats.failures == {"http_error": 1}


def test_counters_snapshot_is_what_results_store(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=lambda req: Reply(status=400, error_message="bad")) as srv:
        client = _client(srv, tmp_path)
        asyncio.run(client.complete(_req("x")))
    counts = client.stats.snapshot()
    assert (counts.requests, counts.api_calls, counts.completed) == (1, 1, 0)
    assert counts.failures == {"http_error": 1}
    calls = CallCounts("endpoint", 1, 0, 1, counts.api_calls, counts.cache_hits, client=counts)
    assert msgspec.json.decode(msgspec.json.encode(calls), type=CallCounts) == calls


def test_persistent_429_fails_after_max_attempts_and_is_not_cached(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=lambda req: Reply(status=429)) as srv:
        client = _client(srv, tmp_path)
        result = asyncio.run(client.complete(_req("x")))
        assert len(srv.requests) == FAST_RETRY.max_attempts
    assert isinstance(result, CallFailure) and result.status == 429
    assert client.cache is not None and len(client.cache) == 0


def test_timeout_is_recorded_as_failure_and_batch_continues(tmp_path: Path) -> None:
    def handler(req: ServerRequest) -> Reply:
        if last_user_text(req) == "slow":
            return Reply(content="late", delay=3.0)
        return Reply(content="fast")

    retry = RetryPolicy(max_attempts=2, base_delay=0.01, seed=1)
    with OpenAICompatServer(handler=handler) as srv:
        client = _client(srv, tmp_path, timeout=0.3, retry=retry)
        out = asyncio.run(client.complete_many([_req("slow"), _req("ok")]))
    slow, fast = out
    assert isinstance(slow, CallFailure) and slow.kind is FailureKind.TIMEOUT
    assert slow.attempts == 2
    assert isinstance(fast, ChatResponse) and fast.text == "fast"
    assert client.stats.failures == {"timeout": 1}


def test_connection_refused_is_a_connection_failure(tmp_path: Path) -> None:
    with OpenAICompatServer() as srv:
        url = srv.base_url
    client = ModelClient(url, retry=RetryPolicy(max_attempts=2, base_delay=0.01))
    result = asyncio.run(client.complete(_req("x")))
    assert isinstance(result, CallFailure) and result.kind is FailureKind.CONNECTION


def test_invalid_response_is_a_typed_failure_not_an_empty_string(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=lambda req: Reply(content=None)) as srv:
        client = _client(srv, tmp_path)
        result = asyncio.run(client.complete(_req("x")))
    assert isinstance(result, CallFailure) and result.kind is FailureKind.INVALID_RESPONSE


@pytest.mark.parametrize(
    ("completion", "message"),
    [
        (object(), "response has no choices"),
        (msgspec.Struct, "response has no choices"),
        (type("C", (), {"choices": []})(), "response has no choices"),
        (type("C", (), {"choices": [None]})(), "first choice has no text content"),
    ],
)
def test_a_completion_without_choices_or_text_is_named(completion: object, message: str) -> None:
    from groundtrace.analyzer.llm._client import _to_response

    result = _to_response(completion, "k", 2)
    assert isinstance(result, CallFailure)
    assert (result.kind, result.message, result.key, result.attempts) == (
        FailureKind.INVALID_RESPONSE, message, "k", 2,
    )  # fmt: skip
    assert result.raw == str(completion)[:4000]


def test_retry_after_header_is_honoured() -> None:
    calls: list[httpx2.Request] = []

    def respond(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        if len(calls) == 1:
            return httpx2.Response(
                429, headers={"retry-after": "0.2"}, json={"error": {"message": "slow down"}}
            )
        return httpx2.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
            },
        )

    policy = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
    client = ModelClient(
        "http://127.0.0.1:9/v1",
        retry=policy,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )
    result = asyncio.run(client.complete(_req("x")))
    assert isinstance(result, ChatResponse) and result.attempts == 2
    # base_delay is 0 and jitter off: the only wait is the one the header asked for.
    assert client.stats.backoff_seconds == 0.2
    assert policy.delay(1, retry_after=0.2) == 0.2


def test_backoff_jitter_is_seeded() -> None:
    a = [RetryPolicy(seed=5).delay(n) for n in (1, 2, 3)]
    b = [RetryPolicy(seed=5).delay(n) for n in (1, 2, 3)]
    c = [RetryPolicy(seed=6).delay(n) for n in (1, 2, 3)]
    assert a == b and a != c
    assert a[0] <= 0.5 and a[2] <= 2.0
