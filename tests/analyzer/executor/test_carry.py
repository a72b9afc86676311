"""What a cluster worker's unit sends back besides its result: the executor carries it without
knowing what it is; the model-call layer's :class:`WorkerCalls` carries the unit's calls to the
run's ledger and to the original client's counters."""

from __future__ import annotations

import ast
import asyncio
import pickle
from pathlib import Path

import pytest

from groundtrace.analyzer.executor import RayExecutor
from groundtrace.analyzer.llm import ChatRequest, ModelClient, UsageLedger, WorkerCalls, counting
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

pytestmark = pytest.mark.timeout(60)

EXECUTOR = Path(__file__).resolve().parents[3] / "analyzer" / "executor"


def test_the_executor_does_not_import_the_model_call_layer() -> None:
    found = []
    for path in sorted(EXECUTOR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            found += [f"{path.name}:{node.lineno}" for n in names if ".llm" in n]
    assert found == []


def _reply(request: ServerRequest) -> Reply:
    return Reply(content="yes", prompt_tokens=12, completion_tokens=2)


def test_a_workers_calls_reach_the_runs_ledger_and_the_original_clients_counters() -> None:
    """The worker is played in this process: a pickled copy of the client and of the carry,
    the unit run outside every ledger, what was taken sent back pickled."""
    with OpenAICompatServer(handler=_reply) as server:
        driver = ModelClient(server.base_url, timeout=10.0)
        worker = pickle.loads(pickle.dumps(driver))
        carry = pickle.loads(pickle.dumps(WorkerCalls()))
        request = ChatRequest(model="m", messages=({"role": "user", "content": "q"},))

        async def unit() -> None:
            with carry.running() as taken:
                assert (await worker.complete(request)).ok
            sent.append(pickle.loads(pickle.dumps(taken())))
            await worker.aclose()

        sent: list[object] = []
        asyncio.run(unit())
        run = UsageLedger()
        assert driver.stats.snapshot().requests == 0  # the call was the worker's copy's
        with counting(run):
            WorkerCalls().absorb(sent[0])
        assert run.calls() == 1
        usage = run.entries()["m"]
        assert (usage.prompt_tokens, usage.completion_tokens) == (12, 2)
        assert driver.stats.snapshot().requests == 1
        assert server.request_count == 1


def test_the_driver_gives_a_ray_executor_it_is_handed_the_model_call_carry() -> None:
    from groundtrace.analyzer._driver import _executor

    async def opened() -> object:
        async with _executor(RayExecutor(workers=1), 1, 1, None) as runner:
            assert isinstance(runner, RayExecutor)
            return runner.carry

    assert RayExecutor(workers=1).carry is None  # the executor alone carries nothing
    assert isinstance(asyncio.run(opened()), WorkerCalls)
