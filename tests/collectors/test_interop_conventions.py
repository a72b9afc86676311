"""Real instrumentations of every major convention, read back as τ.

Spans come from the instrumentations as published (OpenInference's openai instrumentor and
``@tracer`` decorators, OpenLLMetry's openai instrumentor, the official OTel GenAI openai
instrumentation with the GenAI utilities, LangChain with OpenInference's instrumentor), run
against the local OpenAI-compatible server or LangChain's fake chat model; see
``tests/support/instrumented.py``.
"""

from __future__ import annotations

import json

import pytest

from groundtrace.collectors import Trace
from tests.support.instrumented import ANSWER, DOCS, QUERY, SCENARIOS, Run

pytestmark = pytest.mark.integration


def _one(run: Run) -> Trace:
    (trace,) = run.traces
    return trace


def _kinds(trace: Trace) -> set[str]:
    return {f.kind for f in trace.findings}


def _assert_rag(trace: Trace) -> None:
    assert (trace.request.query, trace.answer) == (QUERY, ANSWER)
    assert [(e.id, e.content, e.rank) for e in trace.evidence] == [
        (doc_id, text, rank) for rank, (doc_id, text) in enumerate(DOCS, start=1)
    ]
    (tool,) = trace.tool_calls
    assert tool.name == "lookup" and tool.status == "ok"
    assert tool.result_content == "Steven Spielberg (director)"


def test_openinference_openai_and_decorators() -> None:
    trace = _one(SCENARIOS["openinference-openai"]())
    _assert_rag(trace)
    assert [s.action for s in trace.steps] == ["REQUEST", "RETRIEVE", "LLM", "TOOL", "LLM"]
    assert trace.evidence[0].score == 1.0 and trace.evidence[1].score == 0.5
    assert trace.tool_calls[0].arguments == {"title": "Jaws"}
    asks, answers = trace.llm_calls
    assert [c.name for c in asks.tool_calls] == ["lookup"] and asks.finish_reasons == (
        "tool_calls",
    )
    assert answers.output_text == ANSWER and answers.finish_reasons == ("stop",)
    assert [m.role for m in answers.messages] == ["system", "user"]
    assert _kinds(trace) == {"no_confidence"}


def test_langchain_with_openinference() -> None:
    trace = _one(SCENARIOS["langchain-openinference"]())
    # documents as LangChain's instrumentor writes them: content flattened, ids in output.value
    _assert_rag(trace)
    assert {s.action for s in trace.steps} == {"REQUEST", "RETRIEVE", "TOOL", "LLM", None}
    (llm,) = trace.llm_calls
    assert llm.output_text == ANSWER
    assert [(m.role, m.content) for m in llm.messages][1] == ("user", QUERY)
    assert _kinds(trace) == {"no_confidence"}


def test_openllmetry_openai() -> None:
    plain, tools = SCENARIOS["openllmetry-openai"]().traces
    (llm,) = plain.llm_calls
    assert llm.output_text == ANSWER and llm.finish_reasons == ("stop",)
    assert [c.name for c in tools.llm_calls[0].tool_calls] == ["lookup"]
    assert tools.llm_calls[0].params["tools"][0]["name"] == "lookup"
    # bare model calls: no request, answer or retrieval, reported as such
    assert {"no_query", "no_answer", "no_retrieval"} <= _kinds(plain)


def test_openllmetry_decorators_and_openai() -> None:
    trace = _one(SCENARIOS["openllmetry-decorators"]())
    # the workflow's recorded call arguments and JSON-quoted return value, decoded
    assert (trace.request.query, trace.answer) == (QUERY, ANSWER)
    assert [s.action for s in trace.steps] == ["REQUEST", None, "TOOL", "LLM"]
    (tool,) = trace.tool_calls
    assert (tool.name, tool.arguments) == ("lookup", {"title": "Jaws"})
    assert tool.result_content == '{"director": "Steven Spielberg"}'
    (llm,) = trace.llm_calls
    assert llm.output_text == ANSWER and llm.finish_reasons == ("stop",)
    # a Traceloop task is not a retriever: its output is not taken for evidence
    assert trace.evidence == () and _kinds(trace) == {"no_confidence", "no_retrieval"}


def test_otel_genai_current_conventions() -> None:
    trace = _one(SCENARIOS["otel-genai-openai-latest"]())
    assert (trace.request.query, trace.answer) == (QUERY, ANSWER)
    assert [s.action for s in trace.steps] == ["REQUEST", "LLM", "TOOL", "LLM"]
    asks, answers = trace.llm_calls
    assert asks.provider == "openai" and asks.convention == "genai"
    (call,) = asks.tool_calls
    assert (call.id, call.name, json.loads(call.arguments or "")) == (
        "call_1",
        "lookup",
        {"title": "Jaws"},
    )
    assert answers.output_text == ANSWER and answers.finish_reasons == ("stop",)
    assert [m.content for m in answers.messages] == ["Answer briefly.", QUERY]
    (tool,) = trace.tool_calls
    assert (tool.name, tool.call_id) == ("lookup", "call_1")
    # the GenAI utilities do not record tool arguments or results: reported, not guessed
    assert _kinds(trace) == {"no_confidence", "no_retrieval", "no_tool_result"}


def test_otel_genai_previous_conventions_content_comes_from_their_log_records() -> None:
    run = SCENARIOS["otel-genai-openai-previous"]()
    assert len(run.logs) == 6  # system + user message and the choice, per model call
    trace = _one(run)
    asks, answers = trace.llm_calls
    assert answers.finish_reasons == ("stop",) and answers.usage.input_tokens == 9
    # content went to log records, joined to their spans: read like span events
    for call in (asks, answers):
        assert [(m.role, m.content) for m in call.messages] == [
            ("system", "Answer briefly."),
            ("user", QUERY),
        ]
    assert answers.output_text == ANSWER
    (call,) = asks.tool_calls
    assert (call.id, call.name, json.loads(call.arguments or "")) == (
        "call_1",
        "lookup",
        {"title": "Jaws"},
    )
    assert not trace.findings_of("content_not_captured")
    # the agent span of the previous conventions carries no messages: reported, not guessed
    assert {"no_query", "no_answer"} <= _kinds(trace)
