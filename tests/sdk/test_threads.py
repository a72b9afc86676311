"""Context propagation into thread pools and threads started inside a traced step."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import groundtrace.sdk as gt
from groundtrace.sdk import _threads
from groundtrace.sdk import semconv as sc

from .conftest import Traces


@gt.tool
def work(n: int) -> int:
    return n * 2


def _tool_parents(traces: Traces) -> list[int | None]:
    return [
        s.parent.span_id if s.parent is not None else None
        for s in traces.spans()
        if s.attributes[sc.GT_ACTION] == "TOOL"
    ]


def test_executor_and_thread_work_nest_under_the_step(traces: Traces) -> None:
    @gt.request
    def handle(question: str) -> list[int]:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(work, [1, 2, 3]))
        out: list[int] = []
        thread = threading.Thread(target=lambda: out.append(work(10)))
        thread.start()
        thread.join()
        return results + out

    assert handle("q") == [2, 4, 6, 20]
    root = traces.one("REQUEST").context.span_id
    assert _tool_parents(traces) == [root, root, root, root]
    assert _threads.threads_instrumented()


def test_propagation_opt_out(traces: Traces) -> None:
    traces.settings(propagate_threads=False)

    @gt.request
    def handle(question: str) -> int:
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(work, 1).result()

    assert handle("q") == 2
    assert _tool_parents(traces) == [None]


def test_uninstrument_restores_originals_exactly() -> None:
    _threads.instrument_threads()
    patched_submit = ThreadPoolExecutor.submit
    assert patched_submit is not _threads._PATCH.submit
    original_submit = _threads._PATCH.submit
    original_start = _threads._PATCH.start
    _threads.uninstrument_threads()
    try:
        assert ThreadPoolExecutor.submit is original_submit
        assert threading.Thread.start is original_start
        assert not _threads.threads_instrumented()
        _threads.uninstrument_threads()  # idempotent
        assert ThreadPoolExecutor.submit is original_submit
    finally:
        _threads.instrument_threads()
        _threads.instrument_threads()  # idempotent
    assert ThreadPoolExecutor.submit is patched_submit


def test_with_current_context_helper(traces: Traces) -> None:
    out: list[int] = []

    @gt.request
    def handle(question: str) -> None:
        runner = gt.with_current_context(lambda: out.append(work(1)))
        _threads.uninstrument_threads()
        try:
            thread = threading.Thread(target=runner)
            thread.start()
            thread.join()
        finally:
            _threads.instrument_threads()

    handle("q")
    assert out == [2]
    assert _tool_parents(traces) == [traces.one("REQUEST").context.span_id]
