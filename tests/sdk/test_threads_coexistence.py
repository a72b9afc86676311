"""groundtrace's thread-context patch beside opentelemetry-instrumentation-threading: removing
one never removes the other's propagation, and removing both restores the originals."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.sdk import _threads

threading_instrumentation = pytest.importorskip("opentelemetry.instrumentation.threading")

ORIGINAL_SUBMIT = ThreadPoolExecutor.submit
ORIGINAL_START = threading.Thread.start


@pytest.fixture
def tracer_memory() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    was_on, auto_done = _threads.threads_instrumented(), _threads._PATCH.auto_done
    _threads.uninstrument_threads()
    assert ThreadPoolExecutor.submit is ORIGINAL_SUBMIT
    yield provider, memory
    if was_on:
        _threads.instrument_threads()
    _threads._PATCH.auto_done = auto_done
    provider.shutdown()


def _propagates(provider: TracerProvider, memory: InMemorySpanExporter) -> dict[str, bool]:
    """Whether a span made in a pool task / a new thread gets the submitter's span as parent."""
    tracer = provider.get_tracer("t")
    results: dict[str, bool] = {}
    for how in ("submit", "thread"):
        memory.clear()
        with tracer.start_as_current_span("outer") as outer:
            work = lambda: tracer.start_span("inner").end()  # noqa: E731
            if how == "submit":
                with ThreadPoolExecutor(1) as pool:
                    pool.submit(work).result()
            else:
                thread = threading.Thread(target=work)
                thread.start()
                thread.join()
        (inner,) = [s for s in memory.get_finished_spans() if s.name == "inner"]
        results[how] = (
            inner.parent is not None and inner.parent.span_id == outer.get_span_context().span_id
        )
    return results


def test_removing_groundtrace_keeps_the_threading_instrumentation(
    tracer_memory: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    library = threading_instrumentation.ThreadingInstrumentor()
    _threads.instrument_threads()
    library.instrument()
    try:
        assert _propagates(*tracer_memory) == {"submit": True, "thread": True}
        _threads.uninstrument_threads()  # the library wrapped over groundtrace's patch
        assert not _threads.threads_instrumented()
        assert _propagates(*tracer_memory) == {"submit": True, "thread": True}
        _threads.instrument_threads()  # back on: no second layer, still one propagation
        _threads.uninstrument_threads()
    finally:
        library.uninstrument()
    assert _propagates(*tracer_memory) == {"submit": False, "thread": False}
    _threads.uninstrument_threads()  # groundtrace's patch is on top again: now restored
    assert ThreadPoolExecutor.submit is ORIGINAL_SUBMIT
    assert threading.Thread.start is ORIGINAL_START
