"""groundtrace next to other instrumentations: wrapper chains and suppression.

The other openai tools are the real packages: OpenInference's and OpenLLMetry's
``OpenAIInstrumentor`` and OpenTelemetry's own (``openai-v2``). While both are installed,
every call gives one span to each tool; ``uninstrument()`` of either removes that tool's
spans only; once every tool is uninstalled the original ``create`` is back. Both context
keys OpenTelemetry suppresses instrumentation with silence the instrumentors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest
import rank_bm25
from openai.resources.chat.completions import completions as chat_module
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY_PLAIN
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor
from tests.sdk.conftest import Traces
from tests.support.instrumented import openai_methods
from tests.support.openai_server import OpenAICompatServer

MESSAGES = [{"role": "user", "content": "Who directed Jaws?"}]


def _openinference() -> Any:
    from openinference.instrumentation.openai import OpenAIInstrumentor as Other

    return Other()


def _openllmetry() -> Any:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Other

    return Other()


def _otel_v2() -> Any:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Other

    return Other()


@dataclass(frozen=True)
class Other:
    make: Callable[[], Any]
    #: OpenLLMetry 0.62's ``uninstrument()`` leaves its layer (and its spans) in place: its
    #: ``unwrap("openai.resources.chat.completions", "Completions.create")`` finds nothing.
    removes_itself: bool = True


OTHERS = {
    "openinference": Other(_openinference),
    "openllmetry": Other(_openllmetry, removes_itself=False),
    "otel-openai-v2": Other(_otel_v2),
}
ORIGINAL_CREATE = vars(chat_module.Completions)["create"]
ORIGINAL_REQUEST = openai.OpenAI.request


class Tool:
    """An instrumentor with its own provider and in-memory exporter."""

    def __init__(self, instrumentor: Any) -> None:
        self.instrumentor = instrumentor
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def install(self) -> None:
        self.instrumentor.instrument(tracer_provider=self.provider)

    def uninstall(self) -> None:
        self.instrumentor.uninstrument()

    def spans(self) -> int:
        """Spans finished since the last call."""
        count = len(self.exporter.get_finished_spans())
        self.exporter.clear()
        return count


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def restore_openai() -> Iterator[None]:
    saved = openai_methods()
    yield
    for (cls, name), value in saved.items():  # OpenLLMetry leaves its layers behind
        if vars(cls).get(name) is not value:
            setattr(cls, name, value)


def call(srv: OpenAICompatServer) -> None:
    client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
    out = client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert out.choices[0].message.content == "echo: Who directed Jaws?"


ORDERS = list(itertools.product(["gt", "other"], repeat=2))


@pytest.mark.parametrize("other_name", list(OTHERS))
@pytest.mark.parametrize(("first_in", "first_out"), ORDERS)
def test_one_span_per_tool_in_any_order(
    other_name: str,
    first_in: str,
    first_out: str,
    server: OpenAICompatServer,
) -> None:
    other = OTHERS[other_name]
    tools = {"gt": Tool(OpenAIInstrumentor()), "other": Tool(other.make())}
    second = {"gt": "other", "other": "gt"}
    try:
        tools[first_in].install()
        tools[second[first_in]].install()
        call(server)
        assert (tools["gt"].spans(), tools["other"].spans()) == (1, 1)

        tools[first_out].uninstall()
        call(server)
        remaining = second[first_out]
        assert tools[remaining].spans() == 1
        if first_out == "gt" or other.removes_itself:
            assert tools[first_out].spans() == 0
        tools[remaining].uninstall()
        call(server)
        assert tools["gt"].spans() == 0

        tools["gt"].install()  # a later instrument(): one groundtrace span per call
        call(server)
        assert tools["gt"].spans() == 1
        tools["gt"].uninstall()
        tools["gt"].uninstall()  # idempotent
    finally:
        for tool in tools.values():
            tool.uninstall()
            tool.provider.shutdown()
    create = vars(chat_module.Completions)["create"]
    if other.removes_itself:
        assert create is ORIGINAL_CREATE
        assert openai.OpenAI.request is ORIGINAL_REQUEST
    else:  # only the other tool's own leftover layer, straight around the original
        assert create.__wrapped__ is ORIGINAL_CREATE


@pytest.mark.parametrize("gt_out_first", [True, False])
async def test_async_create_next_to_otel_openai_v2(
    gt_out_first: bool, server: OpenAICompatServer
) -> None:
    original = vars(chat_module.AsyncCompletions)["create"]
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    gt_tool, other = Tool(OpenAIInstrumentor()), Tool(_otel_v2())
    try:
        other.install()
        gt_tool.install()
        await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        assert (gt_tool.spans(), other.spans()) == (1, 1)
        (gt_tool if gt_out_first else other).uninstall()
        await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        assert (gt_tool.spans(), other.spans()) == ((0, 1) if gt_out_first else (1, 0))
    finally:
        for tool in (gt_tool, other):
            tool.uninstall()
            tool.provider.shutdown()
    assert vars(chat_module.AsyncCompletions)["create"] is original


def test_three_tools_each_uninstall_takes_only_its_own_spans(
    server: OpenAICompatServer,
) -> None:
    tools = [Tool(OpenAIInstrumentor()), Tool(_otel_v2()), Tool(_openinference())]
    try:
        for order in (tools, tools[::-1]):
            for tool in order:
                tool.install()
            call(server)
            gt_span, v2_span, oi_span = (t.exporter.get_finished_spans()[0] for t in tools)
            # the same nesting whatever the install order: groundtrace innermost on ``create``
            assert gt_span.parent is not None and oi_span.parent is not None
            assert gt_span.parent.span_id == v2_span.context.span_id
            assert oi_span.parent.span_id == gt_span.context.span_id  # OpenInference: on request
            assert [t.spans() for t in tools] == [1, 1, 1]
            for tool in order:
                tool.uninstall()
                call(server)
                assert [t.spans() for t in tools] == [
                    int(t.instrumentor.is_instrumented_by_opentelemetry) for t in tools
                ]
            assert vars(chat_module.Completions)["create"] is ORIGINAL_CREATE
            assert openai.OpenAI.request is ORIGINAL_REQUEST
    finally:
        for tool in tools:
            tool.uninstall()
            tool.provider.shutdown()


SUPPRESSION_KEYS = {
    "current": otel_context._SUPPRESS_INSTRUMENTATION_KEY,
    "legacy": _SUPPRESS_INSTRUMENTATION_KEY_PLAIN,  # the plain "suppress_instrumentation"
}


@pytest.mark.parametrize("key", list(SUPPRESSION_KEYS))
def test_either_suppression_key_silences_the_instrumentors(
    key: str, traces: Traces, server: OpenAICompatServer
) -> None:
    """(The decorators: ``test_isolation.test_suppression_is_honoured``, with each key.)"""
    bm25 = rank_bm25.BM25Okapi([["jaws", "shark"], ["alien", "ship"]])

    def run_all() -> None:
        call(server)
        assert len(bm25.get_top_n(["jaws"], ["d1", "d2"], n=1)) == 1
        assert len(bm25.get_scores(["jaws"])) == 2

    instrumentors = (OpenAIInstrumentor(), RankBM25Instrumentor())
    for inst in instrumentors:
        inst.instrument(tracer_provider=traces.provider)
    try:
        token = otel_context.attach(otel_context.set_value(SUPPRESSION_KEYS[key], True))
        try:
            run_all()
        finally:
            otel_context.detach(token)
        assert traces.spans() == []
        run_all()
        assert len(traces.spans()) == 3
    finally:
        for inst in instrumentors:
            inst.uninstrument()
