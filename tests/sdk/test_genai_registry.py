"""Every ``gen_ai.*`` / ``openai.*`` attribute the SDK writes is in the OpenTelemetry registry,
with the registry's type; span kinds follow the registry's span definitions.

The registry ships as test data (``tests/fixtures/data/otel_semconv``, see its README entry):
``gen-ai/registry.yaml`` and ``openai/registry.yaml`` verbatim, ``gen-ai/span_kinds.yaml`` an
exact extract of ``spans.yaml``. The SDK's real paths run with the current GenAI set: the
decorators, the rank_bm25 instrumentor, the openai instrumentor against the local
OpenAI-compatible server (chat completions and responses, streaming and not) and the
document agent example.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import openai
import pytest
import yaml
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.collectors import build_traces
from groundtrace.examples.agent_docs.app import TASKS
from groundtrace.examples.agent_docs.app import run as run_agent
from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor
from tests.support.data import DATA
from tests.support.instrumented import records_of
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, default_handler

REGISTRY = DATA / "otel_semconv"
CORPUS = ["jaws is a film by steven spielberg", "alien is a film by ridley scott"]
PREFIXES = ("gen_ai.", "openai.")


def _registry_types(path: Path) -> dict[str, Any]:
    """key -> the registry's ``type`` (a string, or ``{"members": [...]}`` for an enum)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "attributes" in doc:  # definition/2: a top-level list
        entries = doc["attributes"]
        return {e["key"]: e["type"] for e in entries}
    return {a["id"]: a["type"] for group in doc["groups"] for a in group["attributes"]}


TYPES: dict[str, Any] = {
    **_registry_types(REGISTRY / "gen-ai" / "registry.yaml"),
    **_registry_types(REGISTRY / "openai" / "registry.yaml"),
}
SPAN_KINDS: dict[str, str] = {
    s["type"]: s["kind"]
    for s in yaml.safe_load((REGISTRY / "gen-ai" / "span_kinds.yaml").read_text("utf-8"))["spans"]
}


def _type_of(value: Any) -> str:
    """The registry type name of an attribute value as exported."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
        return "string[]"
    return type(value).__name__


def registry_problems(attrs: Mapping[str, Any], where: str) -> list[str]:
    """What is wrong with the ``gen_ai.*`` / ``openai.*`` attributes of one span."""
    problems = []
    for key, value in attrs.items():
        if not key.startswith(PREFIXES):
            continue
        if key not in TYPES:
            problems.append(f"{where}: {key} is not in the registry")
            continue
        declared, actual = TYPES[key], _type_of(value)
        if isinstance(declared, dict):  # an enum of string members
            members = {m["value"] for m in declared["members"]}
            if actual != "string" or value not in members:
                problems.append(f"{where}: {key}={value!r} is not one of {sorted(members)}")
        elif declared != "any" and declared != actual:
            problems.append(f"{where}: {key} is {actual} ({value!r}), the registry says {declared}")
    return problems


def _handler(req: ServerRequest) -> Reply:
    base = default_handler(req)
    return Reply(
        content=base.content,
        cached_tokens=2,
        reasoning_tokens=1,
        service_tier="default",
        system_fingerprint="fp_test",
    )


@gt.retrieve(retriever="bm25", k=2, data_source="films")
def _search(query: str) -> list[dict[str, Any]]:
    return [{"id": "d1", "content": CORPUS[0], "score": 2.0}]


@gt.rerank(k=1, model="cross-encoder")
def _rerank(query: str, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return docs[:1]


@gt.select
def _select(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return docs


@gt.tool
def _lookup(title: str, call_id: str | None = None) -> str:
    """Look a film up."""
    return "Steven Spielberg"


@gt.answer
def _answer(query: str, evidence: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return {"text": text, "confidence": 0.5, "cited_ids": ["d1"]}


@gt.request(app_name="films", app_version="1")
def _app(query: str, client: openai.OpenAI, bm25: BM25Okapi, session_id: str) -> Any:
    docs = _select(_rerank(query, _search(query)))
    bm25.get_top_n(query.lower().split(), CORPUS, n=1)
    _lookup("Jaws", call_id="call_1")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": query}]
    params: dict[str, Any] = {
        "model": "m",
        "temperature": 0,
        "top_p": 1,
        "max_tokens": 16,
        "seed": 7,
        "stop": ["\n"],
        "n": 2,
        "service_tier": "default",
        "response_format": {"type": "text"},
        "extra_body": {"top_k": 20},
    }
    chat: Any = client.chat.completions.create  # the parameters are typed per model
    chat(
        messages=messages,
        tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}],
        **params,
    )
    for _ in chat(messages=messages, stream=True, stream_options={"include_usage": True}, **params):
        pass
    out = client.responses.create(model="m", instructions="Answer briefly.", input=query)
    for _ in client.responses.create(model="m", input=query, stream=True):
        pass
    return _answer(query, docs, out.output_text)


def _collect(provider: TracerProvider, exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    provider.shutdown()
    return list(exporter.get_finished_spans())


@pytest.fixture(scope="module")
def spans() -> Iterator[list[ReadableSpan]]:
    """The spans of one request of the app above (current set, all content captured)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    settings = _runtime.Settings(capture=_runtime.CONTENT_FIELDS, genai=sc.GenAIConventions.LATEST)
    _runtime.install(settings, provider)
    openai_inst, bm25_inst = OpenAIInstrumentor(), RankBM25Instrumentor()
    openai_inst.instrument()
    bm25_inst.instrument()
    try:
        with OpenAICompatServer(handler=_handler) as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
            _app("Who directed Jaws?", client, BM25Okapi([d.split() for d in CORPUS]), "s-1")
    finally:
        openai_inst.uninstrument()
        bm25_inst.uninstrument()
        _runtime.install(old_settings, old_provider)
    yield _collect(provider, exporter)


@pytest.fixture(scope="module")
def agent_spans() -> list[ReadableSpan]:
    """The spans of the document agent example (three of its tasks)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    try:
        run_agent(tracer_provider=provider, tasks=TASKS[:2] + TASKS[-1:])
    finally:
        _runtime.install(old_settings, old_provider)
    return _collect(provider, exporter)


def _emitted(spans: list[ReadableSpan]) -> dict[str, Any]:
    return {k: v for s in spans for k, v in (s.attributes or {}).items() if k.startswith(PREFIXES)}


def test_every_emitted_key_is_in_the_registry_with_its_type(
    spans: list[ReadableSpan], agent_spans: list[ReadableSpan]
) -> None:
    problems = [
        p
        for s in [*spans, *agent_spans]
        for p in registry_problems(s.attributes or {}, f"span {s.name!r}")
    ]
    assert not problems, "\n".join(problems)


def test_the_run_covers_the_keys_of_each_path(
    spans: list[ReadableSpan], agent_spans: list[ReadableSpan]
) -> None:
    """The check above saw every family of key: it cannot pass by seeing none."""
    emitted = _emitted(spans) | _emitted(agent_spans)
    expected = {
        sc.GENAI_OPERATION_NAME,
        sc.GENAI_PROVIDER_NAME,
        sc.GENAI_REQUEST_MODEL,
        sc.GENAI_REQUEST_TEMPERATURE,
        sc.GENAI_REQUEST_TOP_P,
        sc.GENAI_REQUEST_TOP_K,
        sc.GENAI_REQUEST_MAX_TOKENS,
        sc.GENAI_REQUEST_SEED,
        sc.GENAI_REQUEST_STOP_SEQUENCES,
        sc.GENAI_REQUEST_CHOICE_COUNT,
        sc.GENAI_REQUEST_STREAM,
        sc.GENAI_OUTPUT_TYPE,
        sc.GENAI_RESPONSE_ID,
        sc.GENAI_RESPONSE_MODEL,
        sc.GENAI_RESPONSE_FINISH_REASONS,
        sc.GENAI_RESPONSE_TIME_TO_FIRST_CHUNK,
        sc.GENAI_USAGE_INPUT_TOKENS,
        sc.GENAI_USAGE_OUTPUT_TOKENS,
        sc.GENAI_USAGE_CACHE_READ_INPUT_TOKENS,
        sc.GENAI_USAGE_REASONING_OUTPUT_TOKENS,
        sc.GENAI_INPUT_MESSAGES,
        sc.GENAI_OUTPUT_MESSAGES,
        sc.GENAI_SYSTEM_INSTRUCTIONS,
        sc.GENAI_TOOL_DEFINITIONS,
        sc.GENAI_CONVERSATION_ID,
        sc.GENAI_DATA_SOURCE_ID,
        sc.GENAI_RETRIEVAL_DOCUMENTS,
        sc.GENAI_RETRIEVAL_QUERY_TEXT,
        sc.GENAI_TOOL_NAME,
        sc.GENAI_TOOL_CALL_ID,
        sc.GENAI_TOOL_TYPE,
        sc.GENAI_TOOL_DESCRIPTION,
        sc.GENAI_TOOL_CALL_ARGUMENTS,
        sc.GENAI_TOOL_CALL_RESULT,
        sc.GENAI_AGENT_NAME,
        sc.GENAI_AGENT_DESCRIPTION,
        sc.GENAI_AGENT_VERSION,
        sc.OPENAI_API_TYPE,
        sc.OPENAI_REQUEST_SERVICE_TIER,
        sc.OPENAI_RESPONSE_SERVICE_TIER,
        sc.OPENAI_RESPONSE_SYSTEM_FINGERPRINT,
    }
    assert expected - emitted.keys() == set()


def _by_operation(spans: list[ReadableSpan], operation: str) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get(sc.GENAI_OPERATION_NAME) == operation]


def test_retrieval_spans_have_the_registry_kind_and_a_double_top_k(
    spans: list[ReadableSpan],
) -> None:
    retrievals = _by_operation(spans, sc.GenAIOperation.RETRIEVAL.value)
    assert len(retrievals) == 2  # the decorator and the rank_bm25 instrumentor
    kind = SpanKind[SPAN_KINDS["gen_ai.retrieval.client"].upper()]
    for span in retrievals:
        attrs = span.attributes or {}
        assert span.kind is kind, span.name
        assert attrs[sc.OI_SPAN_KIND] == sc.OpenInferenceSpanKind.RETRIEVER.value
        top_k = attrs[sc.GENAI_REQUEST_TOP_K]
        assert isinstance(top_k, float)
        assert top_k in (2.0, 1.0)
        assert attrs[sc.GT_RETRIEVAL_K] == int(top_k)  # the groundtrace key stays an int
    tools = _by_operation(spans, sc.GenAIOperation.EXECUTE_TOOL.value)
    assert [s.kind for s in tools] == [SpanKind[SPAN_KINDS["gen_ai.execute_tool.internal"].upper()]]
    chats = _by_operation(spans, sc.GenAIOperation.CHAT.value)
    assert len(chats) == 4
    assert {s.kind for s in chats} == {SpanKind[SPAN_KINDS["gen_ai.inference.client"].upper()]}


def test_llm_spans_carry_usage_details_service_and_time_to_first_chunk(
    spans: list[ReadableSpan],
) -> None:
    chats = {
        (a[sc.GT_LLM_API], a[sc.GT_LLM_STREAM]): a
        for s in _by_operation(spans, sc.GenAIOperation.CHAT.value)
        if (a := dict(s.attributes or {}))
    }
    for stream in (False, True):
        chat = chats[(sc.LLMApi.CHAT_COMPLETIONS.value, stream)]
        assert chat[sc.GENAI_USAGE_CACHE_READ_INPUT_TOKENS] == 2
        assert chat[sc.OI_LLM_TOKEN_COUNT_PROMPT_CACHE_READ] == 2
        assert chat[sc.GENAI_USAGE_REASONING_OUTPUT_TOKENS] == 1
        assert chat[sc.OI_LLM_TOKEN_COUNT_COMPLETION_REASONING] == 1
        assert chat[sc.OPENAI_REQUEST_SERVICE_TIER] == "default"
        assert chat[sc.OPENAI_RESPONSE_SERVICE_TIER] == "default"
        assert chat[sc.OPENAI_RESPONSE_SYSTEM_FINGERPRINT] == "fp_test"
        assert chat[sc.OPENAI_API_TYPE] == sc.OpenAIApiType.CHAT_COMPLETIONS.value
        assert chat[sc.GENAI_REQUEST_TOP_K] == 20.0
    responses = chats[(sc.LLMApi.RESPONSES.value, False)]
    assert responses[sc.OPENAI_API_TYPE] == sc.OpenAIApiType.RESPONSES.value
    # the test server reports zero cached and reasoning tokens for responses: written as 0
    assert responses[sc.GENAI_USAGE_CACHE_READ_INPUT_TOKENS] == 0
    assert responses[sc.GENAI_USAGE_REASONING_OUTPUT_TOKENS] == 0
    assert sc.OPENAI_REQUEST_SERVICE_TIER not in responses  # none was requested
    for (_, streamed), attrs in chats.items():
        ttfc = attrs.get(sc.GENAI_RESPONSE_TIME_TO_FIRST_CHUNK)
        if not streamed:
            assert ttfc is None
            continue
        assert isinstance(ttfc, float) and ttfc > 0.0
        span = next(
            s
            for s in spans
            if (s.attributes or {}).get(sc.GENAI_RESPONSE_ID) == attrs.get(sc.GENAI_RESPONSE_ID)
        )
        assert span.end_time is not None and span.start_time is not None
        assert ttfc * 1e9 <= span.end_time - span.start_time  # the first chunk, before the end


def test_the_agent_example_has_an_invoke_agent_span(agent_spans: list[ReadableSpan]) -> None:
    agents = _by_operation(agent_spans, sc.GenAIOperation.INVOKE_AGENT.value)
    assert len(agents) == 3  # one per task: the request's root span
    kind = SpanKind[SPAN_KINDS["gen_ai.invoke_agent.internal"].upper()]
    by_id = {s.context.span_id: s for s in agent_spans if s.context is not None}
    for span in agents:
        attrs = span.attributes or {}
        assert attrs[sc.GENAI_AGENT_NAME] == "handbook-agent"
        assert span.name == "invoke_agent handbook-agent"
        assert span.kind is kind and span.parent is None
        assert attrs[sc.GT_ACTION] == sc.Action.REQUEST.value
        assert attrs[sc.OI_SPAN_KIND] == sc.OpenInferenceSpanKind.AGENT.value
    tools = _by_operation(agent_spans, sc.GenAIOperation.EXECUTE_TOOL.value)
    assert tools
    for tool in tools:  # every tool span runs under an agent span
        parent = tool.parent
        while parent is not None and by_id[parent.span_id].parent is not None:
            parent = by_id[parent.span_id].parent
        assert parent is not None and by_id[parent.span_id] in agents


def test_a_genai_reader_reads_top_k_back_as_written(spans: list[ReadableSpan]) -> None:
    """Spans stripped to their ``gen_ai.*`` keys: the model calls keep the double top_k."""
    records = [
        msgspec.structs.replace(
            r, attributes={k: v for k, v in r.attributes.items() if k.startswith("gen_ai.")}
        )
        for r in records_of(spans)
    ]
    (trace,) = build_traces(records)
    chats = [c for c in trace.llm_calls if c.params.get("seed") == 7]
    assert len(chats) == 2
    assert all(c.params["top_k"] == 20.0 for c in chats)
