"""The model client fails fast when the real llama.cpp server dies under it."""

from __future__ import annotations

import pytest

from groundtrace.analyzer.llm import CallFailure, ChatRequest, FailureKind, ModelClient, RetryPolicy

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(600)]

pytest.importorskip("llama_cpp")


async def test_client_gives_up_on_a_killed_server() -> None:
    from groundtrace.analyzer.backends import LlamaServer

    retry = RetryPolicy(max_attempts=3, base_delay=0.2, max_delay=1.0, seed=0)
    with LlamaServer(startup_timeout=300) as server:
        client = ModelClient(server.base_url, concurrency=1, retry=retry, timeout=300)
        process = server._process
        assert process is not None
        process.kill()
        process.wait(timeout=30)
        requests = [
            ChatRequest(
                model=server.model, messages=({"role": "user", "content": f"q{i}"},), max_tokens=4
            )
            for i in range(8)
        ]
        results = await client.complete_many(requests)
        await client.aclose()
    assert all(isinstance(r, CallFailure) and r.kind is FailureKind.CONNECTION for r in results)
    assert client.stats.api_calls == retry.max_attempts
