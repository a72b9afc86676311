"""The OpenTelemetry GenAI attribute sets: chosen by OTEL_SEMCONV_STABILITY_OPT_IN, written by
the decorators and the instrumentors, read back by the collectors into the same τ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import openai
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.collectors import Trace, build_traces
from groundtrace.sdk import _env, _runtime, configure
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from tests.support.genai_app import run_app
from tests.support.instrumented import records_of
from tests.support.openai_server import OpenAICompatServer

Mode = sc.GenAIConventions
CORPUS = ["jaws is a film by steven spielberg", "alien is a film by ridley scott"]


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, Mode.LATEST),
        ("", Mode.LATEST),
        ("http", Mode.LATEST),
        ("gen_ai_latest_experimental", Mode.LATEST),
        ("http/dup, gen_ai_latest_experimental/dup", Mode.BOTH),
        ("gen_ai_latest_experimental,gen_ai_latest_experimental/dup", Mode.BOTH),
        ("gen_ai_previous", Mode.PREVIOUS),
        ("database,gen_ai_previous", Mode.PREVIOUS),
    ],
)
def test_the_opt_in_variable_selects_the_set(
    monkeypatch: pytest.MonkeyPatch, value: str | None, mode: Mode
) -> None:
    if value is None:
        monkeypatch.delenv(_env.OTEL_SEMCONV_STABILITY_OPT_IN, raising=False)
    else:
        monkeypatch.setenv(_env.OTEL_SEMCONV_STABILITY_OPT_IN, value)
    assert _env.genai_conventions() is mode
    settings = _runtime.Settings()
    assert settings.genai is mode
    assert settings.genai_latest is (mode is not Mode.PREVIOUS)
    assert settings.genai_previous is (mode is not Mode.LATEST)


@pytest.mark.usefixtures("restore_settings")
def test_configure_reads_the_variable_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_env.OTEL_SEMCONV_STABILITY_OPT_IN, "gen_ai_previous")
    configure(exporter="none")
    monkeypatch.setenv(_env.OTEL_SEMCONV_STABILITY_OPT_IN, "gen_ai_latest_experimental")
    assert _runtime.settings().genai is Mode.PREVIOUS  # not read again per span
    configure(exporter="none")
    assert _runtime.settings().genai is Mode.LATEST
    gt.shutdown()


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[Mode, list[ReadableSpan]]]:
    with OpenAICompatServer() as srv:
        yield {mode: run_app(mode, srv) for mode in Mode}


def _span(spans: list[ReadableSpan], action: str, api: str | None = None) -> dict[str, Any]:
    found = [
        dict(s.attributes or {})
        for s in spans
        if (s.attributes or {}).get(sc.GT_ACTION) == action
        and (api is None or (s.attributes or {}).get(sc.GT_LLM_API) == api)
    ]
    assert found, action
    return found[0]


def _retrieves(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    return [dict(s.attributes or {}) for s in spans if s.name.startswith("retrieval")]


def test_the_current_set(runs: dict[Mode, list[ReadableSpan]]) -> None:
    spans = runs[Mode.LATEST]
    chat = _span(spans, "LLM", sc.LLMApi.CHAT_COMPLETIONS)
    assert chat[sc.GENAI_PROVIDER_NAME] == "openai" and sc.GENAI_SYSTEM not in chat
    assert sc.GENAI_REQUEST_STREAM not in chat  # set only on streaming requests
    messages = json.loads(chat[sc.GENAI_INPUT_MESSAGES])
    assert messages[0] == {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}
    assert json.loads(chat[sc.GENAI_TOOL_DEFINITIONS]) == [
        {"type": "function", "name": "lookup", "parameters": {}}
    ]
    assert json.loads(chat[sc.GENAI_OUTPUT_MESSAGES])[0]["role"] == "assistant"
    responses = _span(spans, "LLM", sc.LLMApi.RESPONSES)
    assert json.loads(responses[sc.GENAI_SYSTEM_INSTRUCTIONS]) == [
        {"type": "text", "content": "Answer briefly."}
    ]
    assert [m["role"] for m in json.loads(responses[sc.GENAI_INPUT_MESSAGES])] == ["user"]
    decorated, bm25 = _retrieves(spans)
    assert decorated[sc.GENAI_OPERATION_NAME] == "retrieval"
    assert decorated[sc.GENAI_DATA_SOURCE_ID] == "films"
    assert decorated[sc.GENAI_REQUEST_TOP_K] == 2
    assert decorated[sc.GENAI_RETRIEVAL_QUERY_TEXT] == "Who directed Jaws?"
    assert json.loads(decorated[sc.GENAI_RETRIEVAL_DOCUMENTS]) == [{"id": "d1", "score": 2.0}]
    assert bm25[sc.GENAI_REQUEST_TOP_K] == 1 and bm25[sc.GENAI_DATA_SOURCE_ID] == "BM25Okapi"
    assert sc.GENAI_RETRIEVAL_TOP_K not in decorated and sc.GENAI_RETRIEVAL_TOP_K not in bm25
    tool = _span(spans, "TOOL")
    assert tool[sc.GENAI_OPERATION_NAME] == "execute_tool"
    assert tool[sc.GENAI_TOOL_CALL_ID] == "call_1"
    assert json.loads(tool[sc.GENAI_TOOL_CALL_ARGUMENTS]) == {"title": "Jaws"}
    assert tool[sc.GENAI_TOOL_CALL_RESULT] == "Steven Spielberg"


def test_the_previous_set(runs: dict[Mode, list[ReadableSpan]]) -> None:
    spans = runs[Mode.PREVIOUS]
    chat = _span(spans, "LLM", sc.LLMApi.CHAT_COMPLETIONS)
    assert chat[sc.GENAI_SYSTEM] == "openai" and sc.GENAI_PROVIDER_NAME not in chat
    assert chat[sc.GENAI_OPERATION_NAME] == "chat" and chat[sc.GENAI_REQUEST_MODEL] == "m"
    content = {
        sc.GENAI_INPUT_MESSAGES,
        sc.GENAI_OUTPUT_MESSAGES,
        sc.GENAI_SYSTEM_INSTRUCTIONS,
        sc.GENAI_TOOL_DEFINITIONS,
    }
    for span in spans:
        attrs = dict(span.attributes or {})
        assert not content & set(attrs)
        assert not {sc.GENAI_TOOL_CALL_ARGUMENTS, sc.GENAI_TOOL_CALL_RESULT} & set(attrs)
    for retrieve in _retrieves(spans):
        assert not [k for k in retrieve if k.startswith("gen_ai.")], retrieve
        assert retrieve[sc.GT_RETRIEVAL_K] in (1, 2)  # groundtrace's keys stay
    tool = _span(spans, "TOOL")
    assert tool[sc.GENAI_TOOL_NAME] == "_lookup" and tool[sc.GENAI_TOOL_CALL_ID] == "call_1"


def test_both_sets(runs: dict[Mode, list[ReadableSpan]]) -> None:
    spans = runs[Mode.BOTH]
    chat = _span(spans, "LLM", sc.LLMApi.CHAT_COMPLETIONS)
    assert chat[sc.GENAI_SYSTEM] == chat[sc.GENAI_PROVIDER_NAME] == "openai"
    assert sc.GENAI_INPUT_MESSAGES in chat
    latest = set().union(*(dict(s.attributes or {}) for s in runs[Mode.LATEST]))
    both = set().union(*(dict(s.attributes or {}) for s in spans))
    assert both == latest | {sc.GENAI_SYSTEM}


@pytest.mark.parametrize(
    ("mode", "url"),
    [
        (Mode.LATEST, sc.GENAI_SCHEMA_URL),
        (Mode.PREVIOUS, sc.GENAI_PREVIOUS_SCHEMA_URL),
        (Mode.BOTH, sc.GENAI_SCHEMA_URL),
    ],
)
def test_every_span_scope_carries_the_schema_url(
    runs: dict[Mode, list[ReadableSpan]], mode: Mode, url: str
) -> None:
    spans = runs[mode]
    assert len(spans) == 7
    assert {s.instrumentation_scope.schema_url for s in spans if s.instrumentation_scope} == {url}
    assert all(s.instrumentation_scope for s in spans)


def _comparable(trace: Trace) -> Any:
    """τ without what differs between two runs of the same app: ids, times and the raw
    GenAI keys (``gen_ai.*``, ``openai.*``) a step keeps among its scalar attributes."""
    volatile = {"trace_id", "span_id", "parent_span_id", "step_span_id", "start_ns", "end_ns"}

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: clean(v)
                for k, v in value.items()
                if k not in volatile
                and k != "latency_ns"
                and not k.startswith(("gen_ai.", "openai."))
            }
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return clean(msgspec.to_builtins(trace))


def test_each_set_reads_back_into_the_same_trace(runs: dict[Mode, list[ReadableSpan]]) -> None:
    traces = {mode: list(build_traces(records_of(spans))) for mode, spans in runs.items()}
    assert all(len(t) == 1 for t in traces.values())
    latest = traces[Mode.LATEST][0]
    assert latest.request.query == "Who directed Jaws?"
    assert [e.id for e in latest.evidence][:1] == ["d1"]
    assert len(latest.llm_calls) == 2 and len(latest.tool_calls) == 1
    assert not [f for f in latest.findings if f.kind != "no_selection"], latest.findings
    for mode in (Mode.PREVIOUS, Mode.BOTH):
        assert _comparable(traces[mode][0]) == _comparable(latest), mode


def test_the_current_set_alone_is_enough_for_a_genai_reader(
    runs: dict[Mode, list[ReadableSpan]],
) -> None:
    """Spans stripped to their GenAI keys (what a GenAI-only backend keeps) still give the
    model calls with their content, the retrieved documents and the tool call."""
    records = [
        msgspec.structs.replace(
            r, attributes={k: v for k, v in r.attributes.items() if k.startswith("gen_ai.")}
        )
        for r in records_of(runs[Mode.LATEST])
    ]
    (trace,) = build_traces(records)
    chat = [c for c in trace.llm_calls if c.params.get("tools")]
    assert chat and chat[0].provider == "openai"
    assert [m.role for m in chat[0].messages] == ["system", "user"]
    assert {c.messages[0].content for c in trace.llm_calls} == {"Be brief.", "Answer briefly."}
    assert [e.id for e in trace.evidence if e.stage == "RETRIEVE"][:1] == ["d1"]
    (tool,) = trace.tool_calls
    assert tool.name == "_lookup" and tool.arguments == {"title": "Jaws"}
    assert tool.result_content == "Steven Spielberg"


def test_genai_content_is_masked_by_the_same_redaction() -> None:

    def redact(text: str) -> tuple[str, tuple[str, ...]]:
        masked = text.replace("jaws@example.com", "[EMAIL]")
        return masked, ("email",) if masked != text else ()

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, redact=redact), provider)
    inst = OpenAIInstrumentor()
    inst.instrument()
    try:
        with OpenAICompatServer() as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
            client.responses.create(
                model="m", instructions="Mail jaws@example.com.", input="to jaws@example.com"
            )
    finally:
        inst.uninstrument()
        provider.shutdown()
        _runtime.install(old_settings, old_provider)
    (span,) = exporter.get_finished_spans()
    attrs = dict(span.attributes or {})
    for key in (sc.GENAI_SYSTEM_INSTRUCTIONS, sc.GENAI_INPUT_MESSAGES, sc.GENAI_OUTPUT_MESSAGES):
        assert "[EMAIL]" in attrs[key] and "jaws@example.com" not in attrs[key], key
        json.loads(attrs[key])  # still valid JSON
    assert "email" in attrs[sc.GT_REDACTED]
