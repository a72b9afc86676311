"""Hostile values through every decorator and instrumentor, exported through every exporter.

The values: a secret of every built-in masker kind (as values and as mapping keys), lone
surrogates, NUL, a huge string, NaN and infinities, deep nesting, objects whose
``__repr__``/``__str__`` raise, numpy arrays; the openai calls also carry content in their
vendor extensions (``extra_body``, ``extra_query``, ``extra_headers``).
They go through every decorator (``request``, ``retrieve``, ``rerank``, ``select``,
``verify``, ``infer``, ``answer``, ``tool``; plain, generator and async functions; the
``step``/``request_context`` blocks) and every instrumentor (openai through an
``httpx.MockTransport``, plain, streamed and failing; rank_bm25, successful and failing),
and are exported by every exporter the SDK builds (``file``, ``otlp_http`` and ``otlp_grpc`` to
local servers on 127.0.0.1 keeping the raw request bytes, ``console`` into a buffer).

Then the raw exported bytes of each exporter are searched for every planted secret (none may
appear; with content capture off no user-supplied marker may appear either), the app's return
values and exceptions must be the very objects it produced, and every ended span must reach
every exporter.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import os
import re
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import httpx
import numpy as np
import openai
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.sdk._exporters import build_exporter
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor

from .test_export_faults import _collector
from .test_redaction import POSITIVE

pytestmark = pytest.mark.usefixtures("clean_config")

#: One secret of every built-in masker kind, each in its context.
NOTE = " | ".join(text for _, text, _ in POSITIVE)
SECRETS = sorted({secret for _, _, secret in POSITIVE})
#: Every secret in its context as a mapping key (document metadata, replay keyword arguments,
#: tool arguments...): keys are masked like values.
KEYED: Final = {text: index for index, (_, text, _) in enumerate(POSITIVE)}
#: Marks user-supplied text that no masker touches: with capture off it must not be exported.
MARK = "Zyxwvut"
SURROGATE = os.fsdecode(b"report-\xff.pdf")


def _text(field_name: str, *, surrogate: bool = True) -> str:
    """A user-supplied text: a marker naming the field, every secret, NUL, a lone surrogate
    (not in what the openai client must send: it cannot encode one)."""
    return f"{MARK}-{field_name} {NOTE} nul\x00 {SURROGATE if surrogate else ''}"


class Unprintable:
    """An object whose ``__repr__`` and ``__str__`` raise (and that has no JSON form)."""

    __slots__ = ()

    def __repr__(self) -> str:
        raise RuntimeError(NOTE)

    def __str__(self) -> str:
        raise RuntimeError(NOTE)


class Boom(Exception):
    """An application error carrying every secret in its message."""


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def hostile(field_name: str, *, recordable: bool = True) -> dict[str, Any]:
    """A mapping of hostile values (a fresh one per call site). A recordable one is recorded
    (masked and clipped) with capture on; the other also holds an object whose ``__repr__``
    raises and a 5,000-deep nesting, and is recorded as a placeholder at best."""
    values: dict[str, Any] = {
        "text": _text(field_name),
        "huge": _text(field_name) + "x" * 3_000_000,
        "numbers": [math.nan, math.inf, -math.inf, 4111111111111111, 0.4111111111111111],
        "deep": _nested(300, _text(field_name)),
        "array": np.array([0.4111111111111111, 1.5]),
        "card_ints": np.array([4111111111111111, 6011111111111117]),
        "keyed": KEYED,
    }
    if not recordable:
        values["deeper"] = _nested(5000, _text(field_name))
        values["unprintable"] = Unprintable()
    return values


# -- the collectors -------------------------------------------------------------------------


class _GrpcTraces(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace service keeping the raw bytes of every request."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        self.bodies.append(request.SerializeToString())
        return trace_service_pb2.ExportTraceServiceResponse()


@contextlib.contextmanager
def _grpc_collector() -> Iterator[tuple[str, _GrpcTraces]]:
    service = _GrpcTraces()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", service
    finally:
        server.stop(grace=None).wait(10)


def _spans_in(bodies: list[bytes]) -> int:
    count = 0
    for body in bodies:
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        count += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    return count


@dataclass
class Exported:
    """The raw bytes each exporter wrote, and how many spans each holds."""

    raw: dict[str, bytes] = field(default_factory=dict)
    spans: dict[str, int] = field(default_factory=dict)


# -- the application --------------------------------------------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "mock-model"}
    return b"data: " + json.dumps({**chunk, "choices": [choice]}).encode() + b"\n\n"


def _openai_reply(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    if body.get("stream"):
        text = _text("llm_stream", surrogate=False)
        events = [
            _chunk({"role": "assistant", "content": text[:40]}),
            _chunk({"content": text[40:]}),
        ]
        events += [_chunk({}, "stop"), b"data: [DONE]\n\n"]
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"".join(events)
        )
    if body.get("metadata", {}).get("fail"):
        return httpx.Response(
            400, json={"error": {"message": _text("llm_error", surrogate=False), "type": "x"}}
        )
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "mock-model",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": _text("llm_output", surrogate=False),
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "lookup",
                                    "arguments": json.dumps(
                                        {"q": _text("llm_tool_args", surrogate=False)}
                                    ),
                                },
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        },
    )


@gt.retrieve(retriever="hostile")
def search(query: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": "d1",
            "version": "v1",
            "score": 0.4111111111111111,
            "title": _text("title"),
            "source": _text("source"),
            "content": _text("content"),
            "metadata": hostile("metadata"),
        },
        {"id": "d2", "score": math.nan, "content": hostile("content2")["huge"]},
        _text("bare_document"),
    ]


@gt.rerank
def rerank(query: str, docs: list[Any]) -> list[Any]:
    return list(reversed(docs))


@gt.select
def pick(docs: list[Any]) -> list[Any]:
    return docs[:2]


@gt.verify
def check(value: Any) -> Any:
    return value


@gt.infer
def guess(value: Any) -> Any:
    return value


@gt.answer(replayable=True)
def respond(question: str, evidence: list[Any], *, note: Any = None) -> dict[str, Any]:
    return {"answer": _text("answer"), "confidence": math.nan, "quotes": [_text("quote")]}


@gt.tool(paths=("path",))
def read(path: str, payload: Any) -> Any:
    return payload


@gt.retrieve
def stream_docs(query: str) -> Iterator[Any]:
    yield {"id": "g1", "title": _text("generator_title"), "content": _text("generator")}
    yield hostile("generator")["huge"]


@gt.infer
async def think(value: Any) -> Any:
    return value


@gt.tool
def explode(payload: Any) -> None:
    raise Boom(_text("tool_error"))


@gt.verify
def refuse(value: Any) -> None:
    raise ValueError(Unprintable())


@gt.request(app_name="hostile", app_version="1")
def handle(query: str, case_id: str, client: openai.OpenAI) -> list[object]:
    """One request through every step and instrumentor; returns what each step returned."""
    seen: list[object] = []
    options = hostile("retrieve_args", recordable=False)
    docs = search(query, options)
    seen.append(docs)
    seen.append(rerank(query, docs))
    seen.append(pick(docs))
    for step, recordable in ((check, True), (guess, False)):
        value = hostile(step.__name__, recordable=recordable)
        result = step(value)
        assert result is value
        seen.append(result)
    # replay keyword arguments are kept only when JSON can write them (no numpy array)
    seen.append(
        respond(query, docs, note=[_text("replay_kwargs"), 4111111111111111, math.nan, KEYED])
    )
    payload = hostile("tool_args")
    assert read(_text("path"), payload) is payload
    for failing in (explode, refuse):
        with pytest.raises((Boom, ValueError)) as raised:
            failing(hostile("failing", recordable=False))
        seen.append(raised.value)
    with gt.step(gt.Action.INFER, name="block") as block:
        block.record(hostile("block_result"))
    with gt.step(gt.Action.TOOL, name="block_tool") as block:
        block.record_tool_result(
            hostile("block_tool", recordable=False), paths_read=(_text("block_path"),)
        )
    streamed = list(stream_docs(_text("generator_query")))
    assert len(streamed) == 2
    value = hostile("async", recordable=False)
    assert asyncio.run(think(value)) is value
    messages = [{"role": "user", "content": _text("llm_input", surrogate=False)}]
    stream = client.chat.completions.create(model="mock-model", messages=messages, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == _text(
        "llm_stream", surrogate=False
    )
    seen.append(
        client.chat.completions.create(
            model="mock-model",
            messages=messages,
            metadata={"note": _text("llm_metadata", surrogate=False)},
            # vendor extensions: content in the body (a vLLM documents list), the query, headers
            extra_body={"documents": [_text("llm_extra_body", surrogate=False)], "keyed": KEYED},
            extra_query={"note": f"{MARK}-llm_extra_query"},
            extra_headers={"X-Note": f"{MARK}-llm_extra_headers"},
        )
    )
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(
            model="mock-model", messages=messages, metadata={"fail": "yes"}
        )
    seen.append(bad.value)
    corpus = [_text(f"corpus{i}").split() for i in range(3)]
    bm25 = BM25Okapi(corpus)
    query_tokens = _text("bm25_query").split()
    seen.append(bm25.get_top_n(query_tokens, [" ".join(d) for d in corpus], n=2))
    seen.append(bm25.get_scores(query_tokens))
    with pytest.raises(Boom):
        bm25.get_scores([Unhashable()])
    return seen


class Unhashable:
    """A query token whose hash raises an error carrying every secret."""

    __slots__ = ()

    def __hash__(self) -> int:
        raise Boom(_text("bm25_error"))

    def __eq__(self, other: object) -> bool:
        return self is other


#: The spans one run of the app ends: REQUEST, RETRIEVE, RERANK, SELECT, VERIFY, INFER,
#: ANSWER, TOOL, TOOL, VERIFY, two blocks, a generator RETRIEVE, an async INFER, three LLM
#: calls (one streamed), three BM25 calls, and a ``request_context`` REQUEST.
SPANS = 21


def run_app(exporters: list[SpanExporter], capture: bool) -> int:
    """Run the app once, exporting through ``exporters``; the number of spans it ended."""
    memory = InMemorySpanExporter()
    gt.configure(
        exporter=[memory, *exporters],
        capture_content=capture,
        service_name=f"hostile-{SURROGATE}",
        resource_attributes={"deployment": SURROGATE},
    )
    openai_inst, bm25_inst = OpenAIInstrumentor(), RankBM25Instrumentor()
    openai_inst.instrument()
    bm25_inst.instrument()
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://llm.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(_openai_reply)),
    )
    try:
        seen = handle(_text("query"), "case-1", client)
        with gt.request_context(query=_text("context_query"), case_id="case-2") as request:
            request.record(_text("context_answer"))
    finally:
        openai_inst.uninstrument()
        bm25_inst.uninstrument()
        gt.shutdown()
    docs, reranked, picked = seen[:3]
    assert docs[0]["title"] == _text("title")  # the app's values are never rewritten
    assert reranked == list(reversed(docs)) and picked == docs[:2]
    assert isinstance(seen[-2], list) and len(seen[-2]) == 2  # bm25 top 2
    return len(memory.get_finished_spans())


def otlp_json_spans(raw: bytes) -> int:
    """The number of spans in OTLP-JSON lines."""
    return sum(
        len(ss["spans"])
        for line in raw.splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
    )


#: The fields whose marker is recorded with capture on (so its absence with capture off says
#: something): every user-supplied text of the app above.
RECORDED_FIELDS: Final = frozenset(
    {
        *("query", "title", "source", "content", "metadata", "bare_document"),
        *("answer", "quote", "replay_kwargs", "check", "tool_args", "path", "tool_error"),
        *("generator", "generator_title", "generator_query", "block_result", "block_path"),
        *("llm_input", "llm_metadata", "llm_output", "llm_tool_args", "llm_stream", "llm_error"),
        "llm_extra_body",
        *("bm25_query", "bm25_error", "context_query", "context_answer"),
    }
)


def assert_nothing_leaked(raw: bytes, capture: bool, name: str) -> None:
    """No planted secret in ``raw``; with capture on every recorded field's marker is there,
    with capture off no marker at all."""
    assert raw, name
    for secret in SECRETS:
        assert secret.encode() not in raw, (name, secret)
    found = {m.decode() for m in re.findall(MARK.encode() + rb"-([a-z_0-9]+)", raw)}
    if capture:
        assert RECORDED_FIELDS <= found, (name, sorted(RECORDED_FIELDS - found))
        assert b"[REDACTED:" in raw, name
    else:
        assert not found, (name, sorted(found))


def _run_app(tmp_path: Path, capture: bool) -> Exported:
    exported = Exported()
    with _collector("ok") as http, _grpc_collector() as (grpc_url, grpc_service):
        exporters = {
            "file": build_exporter("file", file_path=f"{tmp_path}/traces/"),
            "otlp_http": build_exporter("otlp_http", endpoint=http.url),
            "otlp_grpc": build_exporter("otlp_grpc", endpoint=grpc_url),
            "console": build_exporter("console"),
        }
        console = exporters["console"]
        assert isinstance(console, ConsoleSpanExporter)
        console.out = printed = io.StringIO()  # stdout, as the exporter holds it, is pytest's
        exported.spans["memory"] = run_app(
            [e for e in exporters.values() if e is not None], capture
        )
        exported.raw["console"] = printed.getvalue().encode("utf-8", "surrogateescape")
        exported.raw["otlp_http"] = b"".join(http.bodies)
        exported.raw["otlp_grpc"] = b"".join(grpc_service.bodies)
        exported.spans["otlp_http"] = _spans_in(http.bodies)
        exported.spans["otlp_grpc"] = _spans_in(grpc_service.bodies)
    files = sorted((tmp_path / "traces").rglob("*.jsonl"))
    exported.raw["file"] = b"".join(f.read_bytes() for f in files)
    exported.spans["file"] = otlp_json_spans(exported.raw["file"])
    exported.spans["console"] = exported.raw["console"].count(b'"span_id":')
    return exported


@pytest.mark.parametrize("capture", [True, False], ids=["capture_on", "capture_off"])
def test_hostile_values_leak_nothing_through_any_exporter_and_lose_no_span(
    tmp_path: Path, capture: bool
) -> None:
    exported = _run_app(tmp_path, capture)
    assert exported.spans == dict.fromkeys(exported.spans, SPANS)
    stats = gt.export_stats()
    assert (stats.failed, stats.dropped, stats.queued) == (0, 0, 0)
    for name, raw in exported.raw.items():
        assert_nothing_leaked(raw, capture, name)


def test_a_lone_surrogate_in_the_resource_or_the_scope_loses_no_span(tmp_path: Path) -> None:
    provider = gt.configure(
        exporter="file",
        file_path=f"{tmp_path}/",
        service_name=SURROGATE,
        resource_attributes={"deployment": SURROGATE},
    )
    assert provider is not None
    tracer = provider.get_tracer(f"scope-{SURROGATE}", f"1.0-{SURROGATE}")
    for i in range(5):
        with tracer.start_as_current_span(f"s{i}"):
            pass
    gt.shutdown()
    stats = gt.export_stats()
    assert (stats.exported, stats.failed, stats.dropped) == (5, 0, 0)
    (written,) = tmp_path.glob("*.jsonl")
    lines = written.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5  # five one-span traces: a line each
    for line in lines:
        (resource_spans,) = json.loads(line)["resourceSpans"]
        resource = {
            a["key"]: a["value"]["stringValue"] for a in resource_spans["resource"]["attributes"]
        }
        assert resource["service.name"] == resource["deployment"] == "report-\ufffd.pdf"
        (scope_spans,) = resource_spans["scopeSpans"]
        assert scope_spans["scope"] == {
            "name": "scope-report-\ufffd.pdf",
            "version": "1.0-report-\ufffd.pdf",
        }
        assert len(scope_spans["spans"]) == 1
