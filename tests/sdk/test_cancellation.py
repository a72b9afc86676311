"""A cancelled step is recorded as cancelled, and the cancellation reaches the app unchanged.

``asyncio.wait_for`` timing out, ``task.cancel()`` and a ``TaskGroup`` whose other child
failed all cancel the task running a step by raising ``asyncio.CancelledError`` (a
``BaseException``) inside it. The step's span ends with status ERROR, ``error.type``
``CancelledError`` and an ``exception`` event, never as a (fast) success; the app sees the
same exception, the same ``TimeoutError``, the same ``ExceptionGroup`` as without the SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc

from .conftest import Traces

pytestmark = pytest.mark.timeout(60)

#: Longer than any test waits: a step blocked on it is only ever left by cancellation.
FOREVER = 3600.0


def _assert_cancelled(span: ReadableSpan) -> None:
    assert span.status.status_code is StatusCode.ERROR, span.status
    assert "Cancelled" in (span.status.description or "")
    attrs = span.attributes or {}
    assert attrs[sc.ERROR_TYPE] == "CancelledError"
    events = [e for e in span.events if e.name == sc.EXCEPTION_EVENT]
    assert len(events) == 1
    assert (events[0].attributes or {})[sc.EXCEPTION_TYPE] == "asyncio.exceptions.CancelledError"
    # nothing was returned: no evidence is recorded for a step that never finished
    assert sc.GT_EVIDENCE not in attrs


def _retrieve_forever(started: asyncio.Event) -> Callable[[str], Awaitable[list[str]]]:
    @gt.retrieve(retriever="bm25")
    async def search(query: str) -> list[str]:
        started.set()
        await asyncio.sleep(FOREVER)
        return ["never"]

    return search


def test_wait_for_timeout_marks_the_step_cancelled(traces: Traces) -> None:
    async def run() -> None:
        search = _retrieve_forever(asyncio.Event())
        with pytest.raises(TimeoutError):  # the app's exception, unchanged
            await asyncio.wait_for(search("q"), timeout=0.05)

    asyncio.run(run())
    _assert_cancelled(traces.by_name("retrieval bm25"))


def test_task_cancel_marks_the_step_and_propagates(traces: Traces) -> None:
    async def run() -> asyncio.Task[list[str]]:
        started = asyncio.Event()
        task = asyncio.create_task(_retrieve_forever(started)("q"))
        await asyncio.wait_for(started.wait(), timeout=30)
        task.cancel("shutting down")
        with pytest.raises(asyncio.CancelledError) as raised:
            await task
        assert raised.value.args == ("shutting down",)  # the app's own cancellation
        return task

    task = asyncio.run(run())
    assert task.cancelled()  # the task ends cancelled, as without the SDK
    span = traces.by_name("retrieval bm25")
    _assert_cancelled(span)
    # the message is content: shown (masked) because the test captures content
    assert "shutting down" in (span.status.description or "")


def test_task_group_siblings_of_a_failed_child_are_marked(traces: Traces) -> None:
    @gt.tool
    async def failing(path: str) -> str:
        await asyncio.sleep(0)
        raise ValueError("no such file")

    async def run() -> None:
        started = asyncio.Event()
        search = _retrieve_forever(started)

        async def main() -> None:
            async with asyncio.TaskGroup() as group:
                group.create_task(search("q"))
                await asyncio.wait_for(started.wait(), timeout=30)
                group.create_task(failing("/a"))

        with pytest.raises(ExceptionGroup) as raised:
            await main()
        # the group reports the failure only: the SDK adds nothing to it
        assert [type(e) for e in raised.value.exceptions] == [ValueError]

    asyncio.run(run())
    _assert_cancelled(traces.by_name("retrieval bm25"))
    tool = traces.one("TOOL")
    assert (tool.attributes or {})[sc.ERROR_TYPE] == "ValueError"


def test_cancelled_async_generator_step_is_marked(traces: Traces) -> None:
    @gt.retrieve(retriever="stream")
    async def stream(query: str) -> AsyncIterator[str]:
        yield "d1"
        await asyncio.sleep(FOREVER)
        yield "d2"

    async def consume(out: list[str]) -> None:
        async for item in stream("q"):
            out.append(item)

    async def run() -> list[str]:
        out: list[str] = []
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(consume(out), timeout=0.05)
        return out

    assert asyncio.run(run()) == ["d1"]
    _assert_cancelled(traces.by_name("retrieval stream"))


def test_cancelled_context_manager_step_is_marked(traces: Traces) -> None:
    async def body() -> None:
        async with gt.step(gt.Action.RETRIEVE, retriever="ctx", query="q"):
            await asyncio.sleep(FOREVER)

    async def run() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(body(), timeout=0.05)

    asyncio.run(run())
    _assert_cancelled(traces.by_name("retrieval ctx"))


def test_cancellation_caught_inside_the_step_is_a_success(traces: Traces) -> None:
    """A step that handles its own cancellation and returns has not failed."""

    @gt.retrieve(retriever="partial")
    async def search(query: str) -> list[str]:
        try:
            await asyncio.sleep(FOREVER)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()
            return ["partial"]
        return ["never"]

    async def run() -> Any:
        task = asyncio.create_task(search("q"))
        await asyncio.sleep(0.01)
        task.cancel()
        return await task

    assert asyncio.run(run()) == ["partial"]
    span = traces.by_name("retrieval partial")
    assert span.status.status_code is StatusCode.UNSET
    assert sc.ERROR_TYPE not in (span.attributes or {})
