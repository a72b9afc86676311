"""Spans made by real third-party instrumentations, read back as τ.

Each scenario instruments a real library with the instrumentation its project publishes,
runs it (model calls go to the local OpenAI-compatible test server, or to LangChain's fake
chat model), captures the finished spans with an in-memory exporter and hands back the
spans and the traces :func:`~groundtrace.collectors.build_traces` makes of them.

Usage::

    from tests.support.instrumented import SCENARIOS

    run = SCENARIOS["openinference-openai"]()
    print(len(run.spans), [t.evidence for t in run.traces])

``python -m tests.support.convention_table`` prints the conventions × instrumentations table.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    LogRecordExporter,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors import LogRecord, SourceLocation, SpanRecord, Trace, build_traces
from groundtrace.collectors.readers._otlp_logs import decode_frame
from groundtrace.collectors.readers._otlp_proto import decode_message
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, ToolCallReply

__all__ = [
    "ANSWER",
    "DOCS",
    "MESSAGES",
    "QUERY",
    "SCENARIOS",
    "TOOLS",
    "Run",
    "handler",
    "instrumented",
    "log_records_of",
    "openai_methods",
    "records_of",
    "summary",
]

QUERY = "Who directed Jaws?"
ANSWER = "Steven Spielberg"
#: The in-memory corpus of the RAG scenarios.
DOCS = [
    ("d1", "Jaws is a 1975 film directed by Steven Spielberg."),
    ("d2", "Alien is a 1979 film directed by Ridley Scott."),
]
MESSAGES: list[Any] = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": QUERY},
]
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a film up.",
            "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
        },
    }
]


@dataclass(frozen=True)
class Run:
    """What one scenario produced: the finished spans (and log records) and the traces read
    from them."""

    name: str
    convention: str
    spans: list[SpanRecord]
    traces: list[Trace]
    logs: tuple[LogRecord, ...] = ()


def records_of(spans: Sequence[ReadableSpan] | bytes) -> list[SpanRecord]:
    """Finished SDK spans (or their OTLP protobuf) as the collectors' span records."""
    data = spans if isinstance(spans, bytes) else encode_spans(spans).SerializeToString()
    errors: list[Any] = []
    records = decode_message(data, SourceLocation("memory"), errors)
    assert not errors, errors
    return records


def log_records_of(exporter: InMemoryLogRecordExporter) -> list[LogRecord]:
    """Finished SDK log records, through their OTLP protobuf, as the collectors' records."""
    data = encode_logs(list(exporter.get_finished_logs())).SerializeToString()
    errors: list[Any] = []
    records = decode_frame(data, SourceLocation("memory"), errors)
    assert not errors, errors
    assert all(isinstance(r, LogRecord) for r in records)
    return [r for r in records if isinstance(r, LogRecord)]


def handler(req: ServerRequest) -> Reply:
    """The local server's reply: a ``lookup`` call when tools are offered, else the answer."""
    if req.body.get("tools"):
        return Reply(
            content=None,
            tool_calls=(ToolCallReply("lookup", '{"title": "Jaws"}', "call_1"),),
            prompt_tokens=11,
            completion_tokens=6,
        )
    return Reply(content=ANSWER, prompt_tokens=9, completion_tokens=2)


def openai_methods() -> dict[tuple[type, str], Any]:
    """Every method defined on the classes of ``openai.resources`` (for restoring them)."""
    import openai.resources as resources

    found: dict[tuple[type, str], Any] = {}
    for info in pkgutil.walk_packages(resources.__path__, "openai.resources."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name:
                for name, value in vars(cls).items():
                    if callable(value):
                        found[(cls, name)] = value
    return found


def _reread_stability_opt_in() -> None:
    """Make OpenTelemetry read ``OTEL_SEMCONV_STABILITY_OPT_IN`` again on its next use.

    ``opentelemetry-instrumentation`` reads it once per process into a class flag; the
    scenarios switch it between runs in one process.
    """
    from opentelemetry.instrumentation._semconv import (
        _OpenTelemetrySemanticConventionStability as Stability,
    )

    Stability._initialized = False


@contextmanager
def instrumented(
    instrumentor: Any,
    exporter: SpanExporter,
    env: dict[str, str] | None = None,
    logs: LogRecordExporter | None = None,
) -> Iterator[TracerProvider]:
    """A provider exporting to ``exporter``, with ``instrumentor`` on it for the block.

    ``env`` is set while instrumenting (instrumentations read their options then) and
    restored after; so are the ``openai`` methods (OpenLLMetry 0.62 leaves its wrappers in
    place on ``uninstrument()``). With ``logs``, the instrumentor also gets a logger
    provider exporting its log records there.
    """
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    logger_provider: LoggerProvider | None = None
    extra: dict[str, Any] = {}
    if logs is not None:
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        extra["logger_provider"] = logger_provider
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    _reread_stability_opt_in()
    originals = openai_methods()
    instrumentor.instrument(tracer_provider=provider, **extra)
    try:
        yield provider
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        if logger_provider is not None:
            logger_provider.shutdown()
        for (cls, name), value in originals.items():
            if vars(cls).get(name) is not value:
                setattr(cls, name, value)
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        _reread_stability_opt_in()


def _run(name: str, convention: str, exporter: InMemorySpanExporter) -> Run:
    records = records_of(exporter.get_finished_spans())
    return Run(name, convention, records, list(build_traces(records)))


def _chat_calls(client: openai.OpenAI) -> None:
    client.chat.completions.create(model="local-model", messages=MESSAGES, temperature=0.2)
    client.chat.completions.create(model="local-model", messages=MESSAGES, tools=TOOLS)


def openinference_openai() -> Run:
    """OpenInference's openai instrumentor inside a RAG app traced with its ``@tracer``
    decorators (chain, retriever returning document dicts, tool)."""
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor

    exporter = InMemorySpanExporter()
    with (
        instrumented(OpenAIInstrumentor(), exporter) as provider,
        OpenAICompatServer(handler=handler) as srv,
    ):
        tracer = OITracer(provider.get_tracer("rag-app"), config=TraceConfig())
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)

        @tracer.retriever
        def retrieve(query: str) -> list[dict[str, Any]]:
            return [
                {"id": i, "content": text, "score": 1.0 / r} for r, (i, text) in enumerate(DOCS, 1)
            ]

        @tracer.tool
        def lookup(title: str) -> str:
            return "Steven Spielberg (director)"

        @tracer.chain
        def rag(query: str) -> str:
            retrieve(query)
            client.chat.completions.create(model="local-model", messages=MESSAGES, tools=TOOLS)
            lookup(title="Jaws")
            out = client.chat.completions.create(model="local-model", messages=MESSAGES)
            return out.choices[0].message.content or ""

        rag(QUERY)
    return _run("openinference-openai", "OpenInference", exporter)


def openllmetry_openai() -> Run:
    """OpenLLMetry's openai instrumentor (``opentelemetry-instrumentation-openai``)."""
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    exporter = InMemorySpanExporter()
    with (
        instrumented(OpenAIInstrumentor(), exporter),
        OpenAICompatServer(handler=handler) as srv,
    ):
        _chat_calls(openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0))
    return _run("openllmetry-openai", "OpenLLMetry (GenAI layout)", exporter)


def openllmetry_decorators() -> Run:
    """OpenLLMetry's ``@workflow`` / ``@task`` / ``@tool`` decorators and its openai
    instrumentation, in a child process (:mod:`tests.support.traceloop_app`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "spans.pb"
        subprocess.run(
            [sys.executable, "-m", "tests.support.traceloop_app", str(out)],
            check=True,
            capture_output=True,
            cwd=Path(__file__).resolve().parents[2],
            timeout=120,
        )
        records = records_of(out.read_bytes())
    return Run("openllmetry decorators", "OpenLLMetry", records, list(build_traces(records)))


def _genai_app(provider: TracerProvider, client: openai.OpenAI) -> None:
    """An agent traced with the official GenAI utilities: invoke_agent, chat, execute_tool."""
    from opentelemetry.util.genai.handler import TelemetryHandler
    from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text

    handler = TelemetryHandler(tracer_provider=provider)
    agent = handler.start_invoke_local_agent("openai", request_model="local-model")
    agent.agent_name = "film-bot"
    agent.input_messages = [InputMessage(role="user", parts=[Text(content=QUERY)])]
    client.chat.completions.create(model="local-model", messages=MESSAGES, tools=TOOLS)
    tool = handler.start_tool("lookup", arguments={"title": "Jaws"}, tool_call_id="call_1")
    tool.tool_result = {"director": ANSWER}
    tool.stop()
    out = client.chat.completions.create(model="local-model", messages=MESSAGES)
    text = out.choices[0].message.content or ""
    agent.output_messages = [
        OutputMessage(role="assistant", parts=[Text(content=text)], finish_reason="stop")
    ]
    agent.stop()


def _otel_genai(name: str, env: dict[str, str]) -> Run:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    exporter = InMemorySpanExporter()
    logs = InMemoryLogRecordExporter()
    with (
        instrumented(OpenAIInstrumentor(), exporter, env, logs) as provider,  # type: ignore[no-untyped-call]
        OpenAICompatServer(handler=handler) as srv,
    ):
        _genai_app(provider, openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0))
    records = records_of(exporter.get_finished_spans())
    log_records = log_records_of(logs)
    traces = list(build_traces([*records, *log_records]))
    return Run(name, "OTel GenAI", records, traces, tuple(log_records))


#: The official instrumentation's options for the current conventions, content on the span.
GENAI_LATEST = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}
#: Its default: the previous conventions, content (when on) sent as log records (read and
#: joined to their spans).
GENAI_PREVIOUS = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
}


def otel_genai_openai_latest() -> Run:
    """The official OTel GenAI openai instrumentation, current conventions."""
    return _otel_genai("openai-v2 (latest)", GENAI_LATEST)


def otel_genai_openai_previous() -> Run:
    """The official OTel GenAI openai instrumentation, its default (previous) conventions."""
    return _otel_genai("openai-v2 (default)", GENAI_PREVIOUS)


def langchain_openinference() -> Run:
    """A LangChain RAG chain (in-memory vector store, fake chat model) and a tool, traced by
    ``openinference-instrumentation-langchain``."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from langchain_core.vectorstores import InMemoryVectorStore
    from openinference.instrumentation.langchain import LangChainInstrumentor

    exporter = InMemorySpanExporter()
    with instrumented(LangChainInstrumentor(), exporter):
        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=text, id=i) for i, text in DOCS])
        retriever = store.as_retriever(search_kwargs={"k": 2})

        @tool
        def lookup(title: str) -> str:
            """Look a film up."""
            return "Steven Spielberg (director)"

        prompt = ChatPromptTemplate.from_messages(
            [("system", "Answer from: {context}"), ("user", "{question}")]
        )
        answer = prompt | FakeListChatModel(responses=[ANSWER]) | StrOutputParser()

        def rag(question: str) -> str:
            docs = retriever.invoke(question)
            lookup.invoke({"title": "Jaws"})
            context = "\n".join(d.page_content for d in docs)
            return answer.invoke({"context": context, "question": question})

        RunnableLambda(rag).invoke(QUERY)
    return _run("langchain + openinference", "OpenInference", exporter)


def _groundtrace(mode: str, genai_only: bool = False) -> Callable[[], Run]:
    """groundtrace's own SDK (decorators, openai and rank_bm25 instrumentors) with one GenAI
    attribute set; ``genai_only`` keeps only the ``gen_ai.*`` keys of its spans (what a
    backend that knows only the GenAI conventions keeps)."""
    from msgspec.structs import replace

    from groundtrace.sdk.semconv import GenAIConventions
    from tests.support.genai_app import run_app

    def scenario() -> Run:
        with OpenAICompatServer() as srv:
            records = records_of(run_app(GenAIConventions(mode), srv))
        if genai_only:
            records = [
                replace(
                    r, attributes={k: v for k, v in r.attributes.items() if k.startswith(_GENAI)}
                )
                for r in records
            ]
        name = f"groundtrace SDK ({mode}{', gen_ai.* keys only' if genai_only else ''})"
        return Run(
            name, "groundtrace + OpenInference + OTel GenAI", records, list(build_traces(records))
        )

    return scenario


_GENAI = "gen_ai."


SCENARIOS: dict[str, Callable[[], Run]] = {
    "groundtrace-latest": _groundtrace("latest"),
    "groundtrace-previous": _groundtrace("previous"),
    "groundtrace-both": _groundtrace("both"),
    "groundtrace-latest-genai-only": _groundtrace("latest", genai_only=True),
    "openinference-openai": openinference_openai,
    "openllmetry-openai": openllmetry_openai,
    "openllmetry-decorators": openllmetry_decorators,
    "otel-genai-openai-latest": otel_genai_openai_latest,
    "otel-genai-openai-previous": otel_genai_openai_previous,
    "langchain-openinference": langchain_openinference,
}


def summary(run: Run) -> dict[str, Any]:
    """One row of the conventions × instrumentations table."""
    findings: dict[str, int] = {}
    for trace in run.traces:
        for f in trace.findings:
            findings[f.kind] = findings.get(f.kind, 0) + 1
    return {
        "instrumentation": run.name,
        "convention": run.convention,
        "spans": len(run.spans),
        "log_records": len(run.logs),
        "traces": len(run.traces),
        "steps": sum(len(t.steps) for t in run.traces),
        "actions": sorted({s.action for t in run.traces for s in t.steps if s.action}),
        "evidence": sum(len(t.evidence) for t in run.traces),
        "llm_calls": sum(len(t.llm_calls) for t in run.traces),
        "tool_calls": sum(len(t.tool_calls) for t in run.traces),
        "findings": json.dumps(dict(sorted(findings.items()))),
    }
