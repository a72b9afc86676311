"""Failure isolation (SPEC section 2): the SDK never changes what the application sees."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY_PLAIN
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc

from .conftest import Traces


class Boom(Exception):
    pass


def _current_span_id() -> int:
    return trace.get_current_span().get_span_context().span_id


@pytest.mark.parametrize("kind", ["sync", "async", "gen", "agen"])
def test_user_exception_reraised_unchanged_and_recorded(traces: Traces, kind: str) -> None:
    error = Boom("bad input")

    @gt.retrieve
    def sync_fn(query: str) -> list[str]:
        raise error

    @gt.retrieve
    async def async_fn(query: str) -> list[str]:
        raise error

    @gt.retrieve
    def gen_fn(query: str) -> Iterator[str]:
        yield "first"
        raise error

    @gt.retrieve
    async def agen_fn(query: str) -> AsyncIterator[str]:
        yield "first"
        raise error

    before = otel_context.get_current()
    with pytest.raises(Boom) as caught:
        if kind == "sync":
            sync_fn("q")
        elif kind == "async":
            asyncio.run(async_fn("q"))
        elif kind == "gen":
            list(gen_fn("q"))
        else:

            async def consume() -> None:
                async for _ in agen_fn("q"):
                    pass

            asyncio.run(consume())
    assert caught.value is error
    assert otel_context.get_current() == before
    span = traces.one("RETRIEVE")
    assert span.status.status_code is trace.StatusCode.ERROR
    assert span.attributes[sc.ERROR_TYPE] == "Boom"
    assert [e.name for e in span.events] == ["exception"]
    assert span.end_time is not None


def test_context_manager_exception_passes_through(traces: Traces) -> None:
    error = Boom("x")
    with pytest.raises(Boom) as caught, gt.step(gt.Action.VERIFY):
        raise error
    assert caught.value is error
    assert traces.one("VERIFY").status.status_code is trace.StatusCode.ERROR
    assert _current_span_id() == 0


def _raising(*_: Any) -> Any:
    raise RuntimeError("broken hook")


def test_broken_hooks_leave_return_values_untouched(traces: Traces) -> None:
    result = [{"id": "d1"}]

    @gt.retrieve(to_evidence=_raising)
    def search(query: str) -> list[dict[str, str]]:
        return result

    @gt.answer(to_answer=_raising)
    def respond(question: str) -> str:
        return "answer"

    @gt.tool(paths_hook=_raising)
    def read(path: str) -> str:
        return "text"

    class Odd:
        pass

    gt.register_evidence_mapper(Odd, _raising)
    try:

        @gt.rerank
        def rerank(query: str) -> list[Odd]:
            return [Odd()]

        odd = rerank("q")
    finally:
        gt.unregister_evidence_mapper(Odd)
    assert search("q") is result
    assert respond("q") == "answer"
    assert read("/p") == "text"
    assert isinstance(odd[0], Odd)
    assert len(traces.spans()) == 4
    assert all(s.end_time is not None for s in traces.spans())
    assert traces.one("TOOL").attributes[sc.GT_TOOL_STATUS] == "ok"


class RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __str__(self) -> str:
        raise RuntimeError("str")

    @property
    def content(self) -> str:
        raise RuntimeError("property")


def test_unserialisable_arguments_and_returns(traces: Traces) -> None:
    circular: dict[str, Any] = {"id": "c"}
    circular["self"] = circular
    loop: list[Any] = []
    loop.append(loop)
    weird = RaisingRepr()

    @gt.tool
    def act(a: Any, b: Any) -> Any:
        return (a, b, weird)

    @gt.retrieve
    def search(query: Any) -> list[Any]:
        return [circular, weird, loop]

    @gt.answer
    def respond(question: Any) -> Any:
        return weird

    @gt.verify
    def check(value: Any) -> Any:
        return circular

    @gt.request
    def handle(question: Any) -> Any:
        return loop

    assert act(circular, weird)[2] is weird
    assert search(weird)[0] is circular
    assert respond(weird) is weird
    assert check(loop) is circular
    assert handle(weird) is loop
    assert len(traces.spans()) == 5
    assert _current_span_id() == 0
    evidence = traces.one("RETRIEVE").attributes[sc.GT_EVIDENCE]
    assert '"id":"c"' in str(evidence)


class ExplodingTracer:
    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("tracer broke")


def test_telemetry_failure_runs_untraced(
    traces: Traces, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_runtime._STATE, "tracer", ExplodingTracer())

    @gt.retrieve
    def search(query: str) -> list[str]:
        return [query]

    @gt.retrieve
    def stream(query: str) -> Iterator[str]:
        yield query

    with caplog.at_level(logging.DEBUG, logger="groundtrace.sdk"):
        assert search("q") == ["q"]
        assert list(stream("q")) == ["q"]
        with gt.step(gt.Action.ANSWER) as s:
            s.record_answer("x")
    assert traces.spans() == []
    assert "starting span" in caplog.text
    assert _current_span_id() == 0


def test_failing_attribute_write_still_ends_span(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.sdk.trace import Span

    def broken(self: Any, attributes: Any) -> None:
        raise RuntimeError("attributes broke")

    monkeypatch.setattr(Span, "set_attributes", broken)

    @gt.retrieve
    def search(query: str) -> list[str]:
        return ["x"]

    assert search("q") == ["x"]
    monkeypatch.undo()
    assert traces.one().end_time is not None
    assert _current_span_id() == 0


def test_generator_break_then_close_ends_span(traces: Traces) -> None:
    closed = []

    @gt.retrieve
    def stream(query: str) -> Iterator[str]:
        try:
            yield from ("a", "b", "c")
        finally:
            closed.append(True)

    gen = stream("q")
    for item in gen:
        assert _current_span_id() == 0  # the consumer does not run inside the step
        break
    assert traces.spans() == []  # still open
    gen.close()
    assert closed == [True]
    span = traces.one("RETRIEVE")
    assert span.end_time is not None
    assert span.attributes[sc.GT_EVIDENCE_COUNT] == 1


def test_abandoned_generator_ends_span(traces: Traces) -> None:
    @gt.retrieve
    def stream(query: str) -> Iterator[str]:
        yield from ("a", "b")

    gen = stream("q")
    next(gen)
    del gen
    gc.collect()
    assert traces.one("RETRIEVE").end_time is not None
    assert _current_span_id() == 0


def test_abandoned_async_generator_does_not_corrupt_context(traces: Traces) -> None:
    @gt.retrieve
    async def stream(query: str) -> AsyncIterator[str]:
        for item in ("a", "b", "c"):
            yield item

    @gt.answer
    async def respond(question: str) -> str:
        return "x"

    @gt.request
    async def handle(question: str) -> str:
        async for _ in stream(question):
            break  # abandoned: neither exhausted nor aclose()d
        gc.collect()
        await asyncio.sleep(0)
        return await respond(question)

    async def main() -> None:
        await handle("q")
        await handle("q2")

    asyncio.run(main())
    roots = [s for s in traces.spans() if s.attributes[sc.GT_ACTION] == "REQUEST"]
    answers = [s for s in traces.spans() if s.attributes[sc.GT_ACTION] == "ANSWER"]
    retrievals = [s for s in traces.spans() if s.attributes[sc.GT_ACTION] == "RETRIEVE"]
    assert len(roots) == 2 and len(answers) == 2 and len(retrievals) == 2
    root_ids = {r.context.span_id for r in roots}
    for ans in answers:  # parent is the request, never the abandoned RETRIEVE span
        assert ans.parent is not None and ans.parent.span_id in root_ids
    assert all(r.parent is None for r in roots)
    assert all(s.end_time is not None for s in retrievals)
    assert _current_span_id() == 0


@pytest.mark.parametrize(
    "key",
    # OpenTelemetry honours both: the current key and the legacy plain "suppress_instrumentation"
    [otel_context._SUPPRESS_INSTRUMENTATION_KEY, _SUPPRESS_INSTRUMENTATION_KEY_PLAIN],
    ids=["current", "legacy"],
)
def test_suppression_is_honoured(traces: Traces, key: str) -> None:
    @gt.retrieve
    def search(query: str) -> list[str]:
        return [query]

    @gt.retrieve
    def stream(query: str) -> Iterator[str]:
        yield query

    token = otel_context.attach(otel_context.set_value(key, True))
    try:
        assert search("q") == ["q"]
        assert list(stream("q")) == ["q"]
        with gt.step(gt.Action.TOOL, name="t") as s:
            s.record_tool_result("r")
            assert not s.recording
    finally:
        otel_context.detach(token)
    assert traces.spans() == []
    search("q")
    assert len(traces.spans()) == 1


@pytest.mark.parametrize("kind", ["sync", "async", "gen", "agen"])
def test_disabled_does_no_span_work(traces: Traces, kind: str) -> None:
    traces.settings(enabled=False)

    @gt.retrieve
    def sync_fn(query: str) -> list[str]:
        return [query]

    @gt.retrieve
    async def async_fn(query: str) -> list[str]:
        return [query]

    @gt.retrieve
    def gen_fn(query: str) -> Iterator[str]:
        yield query

    @gt.retrieve
    async def agen_fn(query: str) -> AsyncIterator[str]:
        yield query

    async def collect() -> list[str]:
        return [x async for x in agen_fn("q")]

    if kind == "sync":
        assert sync_fn("q") == ["q"]
    elif kind == "async":
        assert asyncio.run(async_fn("q")) == ["q"]
    elif kind == "gen":
        assert list(gen_fn("q")) == ["q"]
    else:
        assert asyncio.run(collect()) == ["q"]
    assert traces.spans() == []


def test_non_recording_span_skips_attribute_work(make_traces: Any) -> None:
    calls = []

    def mapper(value: Any) -> Any:
        calls.append(value)
        return value

    setup = make_traces(ALWAYS_OFF)
    traces = next(setup)
    try:

        @gt.retrieve(to_evidence=mapper)
        def search(query: str) -> list[str]:
            inner = trace.get_current_span()
            assert inner.get_span_context().is_valid  # context still propagated
            return ["x"]

        assert search("q") == ["x"]
        assert calls == []
        assert traces.spans() == []
    finally:
        next(setup, None)
