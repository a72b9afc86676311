"""The decorators' short cut when no span could record, and the tracer cache behind it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc


@pytest.fixture
def restore_state() -> Iterator[None]:
    old_settings = _runtime.settings()
    old_provider = _runtime._STATE.provider
    try:
        yield
    finally:
        _runtime.install(old_settings, old_provider)


def _memory_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _steps() -> tuple[Any, Any, Any, Any]:
    seen: list[bool] = []

    @gt.retrieve(retriever="bm25")
    def search(query: str) -> list[dict[str, str]]:
        seen.append(trace.get_current_span().get_span_context().is_valid)
        return [{"id": "d1", "content": query}]

    @gt.answer
    async def respond(question: str) -> str:
        return "yes"

    @gt.retrieve
    def stream(query: str) -> Iterator[str]:
        yield query

    return search, respond, stream, seen


def _run_all(search: Any, respond: Any, stream: Any) -> None:
    import asyncio

    assert search("q") == [{"id": "d1", "content": "q"}]
    assert asyncio.run(respond("q")) == "yes"
    assert list(stream("q")) == ["q"]


def test_unset_global_provider_calls_straight_through_then_follows_the_global(
    restore_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS), None)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    search, respond, stream, seen = _steps()
    _run_all(search, respond, stream)
    assert seen == [False]  # no span made current around the function
    assert _runtime.active_tracer() is None

    # a global provider set later is picked up at once
    provider, exporter = _memory_provider()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    _run_all(search, respond, stream)
    assert seen == [False, True]
    assert sorted(s.name for s in exporter.get_finished_spans()) == [
        "respond",
        "retrieval bm25",
        "stream",
    ]

    # and a different global (tests reset it; OTel itself sets it once) replaces the cache
    other, other_exporter = _memory_provider()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", other)
    assert search("q") == [{"id": "d1", "content": "q"}]
    assert [s.name for s in other_exporter.get_finished_spans()] == ["retrieval bm25"]
    assert len(exporter.get_finished_spans()) == 3
    provider.shutdown()
    other.shutdown()


def test_global_no_op_provider_records_nothing(
    restore_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runtime.install(_runtime.Settings(), None)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", trace.NoOpTracerProvider())
    search, respond, stream, seen = _steps()
    _run_all(search, respond, stream)
    assert seen == [False]
    assert _runtime.active_tracer() is None


def test_configured_no_op_provider_then_a_real_one(restore_state: None) -> None:
    gt.configure(tracer_provider=trace.NoOpTracerProvider(), exporter="none")
    search, respond, stream, seen = _steps()
    _run_all(search, respond, stream)
    assert seen == [False]

    provider, exporter = _memory_provider()
    gt.configure(tracer_provider=provider, exporter="none")
    _run_all(search, respond, stream)
    assert seen == [False, True]
    assert len(exporter.get_finished_spans()) == 3
    gt.shutdown()
    provider.shutdown()


def test_provider_handing_out_no_op_tracers_is_treated_as_off(restore_state: None) -> None:
    class DisabledProvider(TracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
            return trace.NoOpTracer()

    _runtime.install(_runtime.Settings(), DisabledProvider())
    search, respond, stream, seen = _steps()
    _run_all(search, respond, stream)
    assert seen == [False]
    assert _runtime.active_tracer() is None


def test_disabling_and_enabling_takes_effect_on_already_decorated_functions(
    restore_state: None,
) -> None:
    provider, exporter = _memory_provider()
    _runtime.install(_runtime.Settings(), provider)
    search, respond, stream, seen = _steps()
    _run_all(search, respond, stream)
    _runtime.install(dataclasses.replace(_runtime.settings(), enabled=False), provider)
    _run_all(search, respond, stream)
    _runtime.install(dataclasses.replace(_runtime.settings(), enabled=True), provider)
    _run_all(search, respond, stream)
    assert seen == [True, False, True]
    assert len(exporter.get_finished_spans()) == 6
    assert {(s.attributes or {}).get(sc.GT_ACTION) for s in exporter.get_finished_spans()} == {
        "RETRIEVE",
        "ANSWER",
    }
    provider.shutdown()


def test_get_tracer_still_returns_a_tracer_when_nothing_records(
    restore_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    _runtime.install(_runtime.Settings(enabled=False), None)
    tracer = _runtime.get_tracer()
    with tracer.start_as_current_span("x") as span:
        assert not span.is_recording()
