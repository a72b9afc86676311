"""Interop: spans of other instrumentations become the same τ, with honest findings.

``openinference-instrumentation-openai`` (OpenInference convention) and OpenLLMetry's
``opentelemetry-instrumentation-openai`` from ``traceloop-sdk`` (which, as of 0.62, writes
the OTel GenAI layout: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON) each
instrument real ``openai`` chat calls to a local OpenAI-compatible server; the spans are
exported with the SDK's OTLP-JSON file exporter and read back by the collectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from groundtrace.collectors import ReadReport, Trace, read_traces
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
from tests.support.instrumented import MESSAGES, TOOLS, handler, instrumented
from tests.support.openai_server import OpenAICompatServer

pytestmark = pytest.mark.integration


def _instrumentor(name: str) -> Any:
    if name == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor()
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor as TraceloopInstrumentor

    return TraceloopInstrumentor()


@pytest.fixture(params=["openinference", "traceloop"])
def traces(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, list[Trace]]]:
    path = tmp_path / "spans.jsonl"
    with (
        instrumented(_instrumentor(request.param), OTLPJsonFileExporter(path)),
        OpenAICompatServer(handler=handler) as srv,
    ):
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        client.chat.completions.create(
            model="local-model", messages=MESSAGES, temperature=0.2, seed=3
        )
        client.chat.completions.create(model="local-model", messages=MESSAGES, tools=TOOLS)
    report = ReadReport()
    result = list(read_traces([path], report=report))
    assert report.ok, report.errors
    yield request.param, result


def test_llm_call_messages_and_usage_survive(traces: tuple[str, list[Trace]]) -> None:
    name, result = traces
    assert len(result) == 2  # one trace per un-parented chat call
    plain, _tools = result
    (llm,) = plain.llm_calls
    assert llm.model == "local-model"
    assert [(m.role, m.content) for m in llm.messages] == [
        ("system", "Answer briefly."),
        ("user", "Who directed Jaws?"),
    ]
    assert llm.output_text == "Steven Spielberg"
    assert (llm.usage.input_tokens, llm.usage.output_tokens, llm.usage.total_tokens) == (9, 2, 11)
    assert llm.params.get("temperature") == 0.2
    assert llm.latency_ns is not None and llm.latency_ns > 0
    assert plain.steps[0].action == "LLM"
    expected_convention = "openinference" if name == "openinference" else "genai"
    assert plain.conventions == (expected_convention,)
    if name == "openinference":
        assert llm.params.get("seed") == 3
        assert llm.request_json is not None and '"Who directed Jaws?"' in llm.request_json


def test_requested_tool_calls_survive(traces: tuple[str, list[Trace]]) -> None:
    _, (_, tools) = traces
    (llm,) = tools.llm_calls
    (call,) = llm.tool_calls
    assert (call.id, call.name) == ("call_1", "lookup")
    assert call.arguments is not None and '"Jaws"' in call.arguments
    assert llm.usage.input_tokens == 11 and llm.usage.output_tokens == 6


def test_missing_information_is_reported_not_guessed(traces: tuple[str, list[Trace]]) -> None:
    _, result = traces
    for trace in result:
        kinds = {f.kind for f in trace.findings}
        assert {"no_query", "no_answer", "no_confidence", "no_retrieval"} <= kinds
        assert trace.request.query is None and trace.answer is None and trace.confidence is None
        assert trace.evidence == ()
