"""Every major convention, current and previous, read into τ; what cannot be read is a finding.

Attribute layouts are those the real instrumentations write (OpenInference's ``@tracer``
decorators and LangChain instrumentor, OpenLLMetry's decorators, the OTel GenAI openai
instrumentation); ``test_interop_instrumentations.py`` runs the instrumentations themselves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from groundtrace.collectors import SpanRecord, Trace, build_traces
from groundtrace.collectors.spans import SourceLocation, SpanEvent
from groundtrace.sdk import semconv as sc
from tests.support.otlp_spans import TRACE_A, sid

OI_KIND = sc.OI_SPAN_KIND
DOCS = [
    {"id": "d1", "content": "Jaws is a 1975 film.", "score": 0.9, "metadata": {"src": "wiki"}},
    {"page_content": "Spielberg directed it.", "metadata": {}},
]


def _trace(*spans: tuple[str | None, dict[str, Any]], events: Sequence[SpanEvent] = ()) -> Trace:
    """One trace: the first span is the root, the others its children, in order; ``events``
    go on the last span."""
    records = [
        SpanRecord(
            trace_id=TRACE_A,
            span_id=sid(i + 1),
            parent_span_id=None if i == 0 else sid(1),
            name=name or f"span{i}",
            start_time_unix_nano=100 * i + 1,
            end_time_unix_nano=100 * i + 50,
            attributes=attrs,
            location=SourceLocation("mem.jsonl", i + 1),
            events=list(events) if i == len(spans) - 1 else [],
        )
        for i, (name, attrs) in enumerate(spans)
    ]
    (trace,) = list(build_traces(records))
    return trace


def _chain(query: str = "Who directed Jaws?", answer: str = "Steven Spielberg") -> Any:
    return "rag", {OI_KIND: "CHAIN", sc.OI_INPUT_VALUE: query, sc.OI_OUTPUT_VALUE: answer}


# --- OpenInference ---------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [lambda d: d, lambda d: {"documents": d}])
def test_openinference_retriever_documents_in_output_value_become_evidence(wrap: Any) -> None:
    retriever = {OI_KIND: "RETRIEVER", sc.OI_OUTPUT_VALUE: json.dumps(wrap(DOCS))}
    trace = _trace(_chain(), ("retrieve", retriever))
    assert [(e.id, e.rank, e.score, e.content) for e in trace.evidence] == [
        ("d1", 1, 0.9, "Jaws is a 1975 film."),
        (None, 2, None, "Spielberg directed it."),
    ]
    assert trace.evidence[0].metadata == {"src": "wiki"}
    assert trace.steps[1].action == "RETRIEVE"
    assert (trace.request.query, trace.answer) == ("Who directed Jaws?", "Steven Spielberg")
    assert not trace.findings_of("no_retrieval")


def test_openinference_plain_text_documents_in_output_value() -> None:
    retriever = {OI_KIND: "RETRIEVER", sc.OI_OUTPUT_VALUE: '["doc a", "doc b"]'}
    trace = _trace(_chain(), ("retrieve", retriever))
    assert [(e.rank, e.content) for e in trace.evidence] == [(1, "doc a"), (2, "doc b")]


def test_langchain_flattened_documents_take_their_ids_from_output_value() -> None:
    docs = [{"id": "d2", "page_content": "Alien.", "metadata": {}, "type": "Document"}]
    retriever = {
        OI_KIND: "RETRIEVER",
        sc.OI_OUTPUT_VALUE: json.dumps({"documents": docs}),
        sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_CONTENT): "Alien.",
    }
    (evidence,) = _trace(_chain(), ("retrieve", retriever)).evidence
    assert (evidence.id, evidence.content) == ("d2", "Alien.")


def test_retriever_output_that_is_no_document_list_is_a_finding() -> None:
    retriever = {OI_KIND: "RETRIEVER", sc.OI_OUTPUT_VALUE: "three documents"}
    trace = _trace(_chain(), ("retrieve", retriever))
    assert trace.evidence == ()
    (bad,) = trace.findings_of("bad_attribute_type")
    assert bad.field == sc.OI_OUTPUT_VALUE and bad.span_id == sid(2)
    assert bad.location == "mem.jsonl:2"
    assert any(sid(2) in f.message for f in trace.findings_of("content_not_captured"))


def test_retriever_without_documents_is_a_finding_not_a_silent_gap() -> None:
    trace = _trace(_chain(), ("retrieve", {OI_KIND: "RETRIEVER", sc.OI_INPUT_VALUE: "q"}))
    (finding,) = trace.findings_of("content_not_captured")
    assert finding.span_id == sid(2) and "no readable documents" in finding.message


@pytest.mark.parametrize(
    ("value", "query"),
    [
        ('{"question": "Who directed Jaws?", "k": 2}', "Who directed Jaws?"),
        ('"Who directed Jaws?"', "Who directed Jaws?"),
        ('{"k": 2}', '{"k": 2}'),  # no query key: the input as recorded
    ],
)
def test_openinference_root_query_from_a_json_input(value: str, query: str) -> None:
    name, root = _chain()
    trace = _trace((name, {**root, sc.OI_INPUT_VALUE: value}))
    assert trace.request.query == query


def test_openinference_finish_reason_is_read() -> None:
    llm = {
        OI_KIND: "LLM",
        sc.OI_LLM_MODEL_NAME: "m",
        sc.OI_LLM_FINISH_REASON: "length",
    }
    (call,) = _trace(_chain(), ("chat", llm)).llm_calls
    assert call.finish_reasons == ("length",)


def test_every_openinference_span_kind_is_mapped() -> None:
    kinds = [k.value for k in sc.OpenInferenceSpanKind]
    trace = _trace(_chain(), *[(k, {OI_KIND: k}) for k in kinds])
    actions = {s.name: s.action for s in trace.steps[1:]}
    assert actions == {
        "CHAIN": None,
        "RETRIEVER": "RETRIEVE",
        "RERANKER": "RERANK",
        "LLM": "LLM",
        "TOOL": "TOOL",
        "AGENT": None,  # an agent below the root is a step, not the request
        "EMBEDDING": None,
        "GUARDRAIL": None,
        "EVALUATOR": None,
        "UNKNOWN": None,
        "PROMPT": None,
        "DECISION": None,
    }
    assert not trace.findings_of("unknown_span_kind")


def test_an_unknown_span_kind_is_a_finding() -> None:
    trace = _trace(_chain(), ("odd", {OI_KIND: "TELEPORTER"}))
    (finding,) = trace.findings_of("unknown_span_kind")
    assert finding.field == sc.OI_SPAN_KIND and finding.span_id == sid(2)
    assert "'TELEPORTER'" in finding.message


# --- OpenLLMetry / Traceloop ----------------------------------------------------------------


def _workflow(entity_input: str, entity_output: str) -> Any:
    return "rag.workflow", {
        sc.TRACELOOP_SPAN_KIND: "workflow",
        sc.TRACELOOP_ENTITY_NAME: "rag",
        sc.TRACELOOP_ENTITY_INPUT: entity_input,
        sc.TRACELOOP_ENTITY_OUTPUT: entity_output,
    }


@pytest.mark.parametrize(
    ("entity_input", "query"),
    [
        ('{"args": ["Who directed Jaws?"], "kwargs": {}}', "Who directed Jaws?"),
        ('{"args": [3, "Who?"], "kwargs": {}}', "Who?"),
        ('{"args": [], "kwargs": {"question": "Q2"}}', "Q2"),
        ('{"args": [], "kwargs": {"k": 2, "query": "Q3"}}', "Q3"),
        ('{"args": [], "kwargs": {"input": "Q4"}}', "Q4"),
    ],
)
def test_traceloop_query_is_decoded_from_entity_input(entity_input: str, query: str) -> None:
    trace = _trace(_workflow(entity_input, '"ok"'))
    assert trace.request.query == query
    assert trace.answer == "ok"


def test_traceloop_structured_output_is_kept_as_text() -> None:
    trace = _trace(_workflow('{"args": ["q"], "kwargs": {}}', '{"answer": "x"}'))
    assert trace.answer == '{"answer": "x"}'


def test_traceloop_input_without_a_query_is_a_finding() -> None:
    trace = _trace(_workflow('{"args": [1, 2], "kwargs": {"k": 3}}', '"ok"'))
    assert trace.request.query is None
    fields = [f.field for f in trace.findings_of("no_query")]
    assert sc.TRACELOOP_ENTITY_INPUT in fields


def test_traceloop_tool_arguments_and_result() -> None:
    tool = {
        sc.TRACELOOP_SPAN_KIND: "tool",
        sc.TRACELOOP_ENTITY_NAME: "lookup",
        sc.TRACELOOP_ENTITY_INPUT: '{"args": [], "kwargs": {"title": "Jaws"}}',
        sc.TRACELOOP_ENTITY_OUTPUT: '{"director": "Spielberg"}',
    }
    trace = _trace(_workflow('{"args": ["q"], "kwargs": {}}', '"ok"'), ("lookup.tool", tool))
    (call,) = trace.tool_calls
    assert (call.name, call.arguments) == ("lookup", {"title": "Jaws"})
    assert call.result_content == '{"director": "Spielberg"}'


# --- OTel GenAI, current (gen-ai-dev/1.42.0-dev) and previous -------------------------------

INPUT = [{"role": "user", "parts": [{"type": "text", "content": "Who directed Jaws?"}]}]
OUTPUT = [
    {
        "role": "assistant",
        "parts": [
            {"type": "text", "content": "Let me look."},
            {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"title": "Jaws"}},
        ],
        "finish_reason": "tool_calls",
    }
]
TOOL_DEFS = [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]


def _chat(**extra: Any) -> dict[str, Any]:
    return {
        sc.GENAI_OPERATION_NAME: "chat",
        sc.GENAI_REQUEST_MODEL: "m",
        sc.GENAI_PROVIDER_NAME: "openai",
        sc.GENAI_SYSTEM: "az.ai.openai",
        **extra,
    }


def _agent(**extra: Any) -> Any:
    return "invoke_agent", {sc.GENAI_OPERATION_NAME: "invoke_agent", **extra}


def test_genai_structured_messages_instructions_and_tool_definitions() -> None:
    chat = _chat(
        **{
            sc.GENAI_INPUT_MESSAGES: json.dumps(INPUT),
            sc.GENAI_OUTPUT_MESSAGES: json.dumps(OUTPUT),
            sc.GENAI_SYSTEM_INSTRUCTIONS: json.dumps([{"type": "text", "content": "Be brief."}]),
            sc.GENAI_TOOL_DEFINITIONS: json.dumps(TOOL_DEFS),
        }
    )
    (call,) = _trace(_agent(), ("chat m", chat)).llm_calls
    assert call.provider == "openai"  # gen_ai.provider.name supersedes gen_ai.system
    assert [(m.role, m.content) for m in call.messages] == [
        ("system", "Be brief."),
        ("user", "Who directed Jaws?"),
    ]
    assert call.output_text == "Let me look."
    ((call_id, name, arguments),) = [(c.id, c.name, c.arguments) for c in call.tool_calls]
    assert (call_id, name, json.loads(arguments or "")) == ("c1", "lookup", {"title": "Jaws"})
    assert call.finish_reasons == ("tool_calls",)  # per choice, from the output messages
    assert call.params["tools"] == TOOL_DEFS
    assert call.convention == "genai"


def test_genai_operation_details_event() -> None:
    details = SpanEvent(
        sc.GENAI_EVENT_OPERATION_DETAILS,
        5,
        {sc.GENAI_INPUT_MESSAGES: json.dumps(INPUT), sc.GENAI_OUTPUT_MESSAGES: json.dumps(OUTPUT)},
    )
    trace = _trace(_agent(), ("chat m", _chat()), events=[details])
    (call,) = trace.llm_calls
    assert call.messages[0].content == "Who directed Jaws?" and call.output_text == "Let me look."
    assert call.finish_reasons == ("tool_calls",)
    assert not trace.findings_of("content_not_captured")


def test_genai_previous_per_message_events_are_still_read() -> None:
    # the choice event's body as OTLP delivers it: a key-value list (a dict)
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "message": {"content": "S."}}
    events = [
        SpanEvent(sc.GENAI_EVENT_SYSTEM_MESSAGE, 2, {sc.CONTENT: "Be brief."}),
        SpanEvent(sc.GENAI_EVENT_USER_MESSAGE, 3, {sc.CONTENT: "Who directed Jaws?"}),
        SpanEvent(sc.GENAI_EVENT_CHOICE, 4, choice),
    ]
    old = {sc.GENAI_OPERATION_NAME: "chat", sc.GENAI_REQUEST_MODEL: "m", sc.GENAI_SYSTEM: "openai"}
    (call,) = _trace(_agent(), ("chat m", old), events=events).llm_calls
    assert [m.role for m in call.messages] == ["system", "user"]
    assert (call.output_text, call.finish_reasons, call.provider) == (
        "S.",
        ("stop",),
        "openai",
    )


def test_genai_chat_without_content_is_a_finding() -> None:
    trace = _trace(_agent(), ("chat m", _chat(**{sc.GENAI_USAGE_INPUT_TOKENS: 9})))
    (call,) = trace.llm_calls
    assert call.usage.input_tokens == 9 and call.messages == ()
    (finding,) = trace.findings_of("content_not_captured")
    assert finding.span_id == sid(2) and "log records" in finding.message


def test_genai_retrieval_span_is_a_retrieve_step_with_evidence() -> None:
    docs = [{"id": "d1", "score": 0.8, "content": "Jaws (1975)."}, {"id": "d2", "score": 0.5}]
    retrieval = {
        sc.GENAI_OPERATION_NAME: "retrieval",
        sc.GENAI_DATA_SOURCE_ID: "wiki",
        sc.GENAI_REQUEST_TOP_K: 2,
        sc.GENAI_RETRIEVAL_QUERY_TEXT: "Jaws director",
        sc.GENAI_RETRIEVAL_DOCUMENTS: json.dumps(docs),
    }
    trace = _trace(_agent(), ("retrieval wiki", retrieval))
    step = trace.steps[1]
    assert step.action == "RETRIEVE" and step.convention == "genai"
    assert step.attributes[sc.GENAI_DATA_SOURCE_ID] == "wiki"
    assert step.attributes[sc.GENAI_REQUEST_TOP_K] == 2
    assert step.attributes[sc.GENAI_RETRIEVAL_QUERY_TEXT] == "Jaws director"
    assert [(e.id, e.rank, e.score, e.content) for e in trace.evidence] == [
        ("d1", 1, 0.8, "Jaws (1975)."),
        ("d2", 2, 0.5, None),
    ]


def test_genai_retrieval_without_the_opt_in_documents_is_a_finding() -> None:
    retrieval = {sc.GENAI_OPERATION_NAME: "retrieval", sc.GENAI_DATA_SOURCE_ID: "wiki"}
    trace = _trace(_agent(), ("retrieval wiki", retrieval))
    assert trace.evidence == () and trace.steps[1].action == "RETRIEVE"
    assert [f.span_id for f in trace.findings_of("content_not_captured")] == [sid(2)]


def test_genai_execute_tool_span_is_a_tool_call() -> None:
    tool = {
        sc.GENAI_OPERATION_NAME: "execute_tool",
        sc.GENAI_TOOL_NAME: "lookup",
        sc.GENAI_TOOL_CALL_ID: "c1",
        sc.GENAI_TOOL_CALL_ARGUMENTS: '{"title": "Jaws"}',
        sc.GENAI_TOOL_CALL_RESULT: '{"director": "Spielberg"}',
    }
    (call,) = _trace(_agent(), ("execute_tool lookup", tool)).tool_calls
    assert (call.name, call.call_id, call.arguments) == ("lookup", "c1", {"title": "Jaws"})
    assert call.result_content == '{"director": "Spielberg"}' and call.status == "ok"


def test_genai_agent_root_gives_query_answer_and_conversation() -> None:
    root = _agent(
        **{
            sc.GENAI_INPUT_MESSAGES: json.dumps(INPUT),
            sc.GENAI_OUTPUT_MESSAGES: json.dumps(OUTPUT),
            sc.GENAI_CONVERSATION_ID: "conv-1",
        }
    )
    trace = _trace(root)
    assert (trace.request.query, trace.answer) == ("Who directed Jaws?", "Let me look.")
    assert trace.request.session_id == "conv-1"


def test_genai_unknown_operation_is_a_finding() -> None:
    trace = _trace(_agent(), ("dream", {sc.GENAI_OPERATION_NAME: "dream"}))
    (finding,) = trace.findings_of("unknown_span_kind")
    assert finding.field == sc.GENAI_OPERATION_NAME and finding.span_id == sid(2)


def test_a_successful_tool_call_without_a_result_is_a_finding() -> None:
    tool = {sc.GENAI_OPERATION_NAME: "execute_tool", sc.GENAI_TOOL_NAME: "lookup"}
    trace = _trace(_agent(), ("execute_tool lookup", tool))
    (finding,) = trace.findings_of("no_tool_result")
    assert finding.span_id == sid(2) and trace.tool_calls[0].status == "ok"


def test_openinference_tools_offered_are_the_calls_tool_parameters() -> None:
    schema = {"type": "function", "function": {"name": "lookup"}}
    llm = {
        OI_KIND: "LLM",
        sc.OI_LLM_INVOCATION_PARAMETERS: '{"temperature": 0}',
        sc.indexed(sc.OI_LLM_TOOLS, 0, sc.OI_TOOL_JSON_SCHEMA): json.dumps(schema),
        sc.indexed(sc.OI_LLM_TOOLS, 1, sc.OI_TOOL_JSON_SCHEMA): "not json",
    }
    trace = _trace(_chain(), ("chat", llm))
    assert trace.llm_calls[0].params == {"temperature": 0, "tools": [schema]}
    (bad,) = trace.findings_of("bad_attribute_type")
    assert bad.field == sc.indexed(sc.OI_LLM_TOOLS, 1, sc.OI_TOOL_JSON_SCHEMA)
