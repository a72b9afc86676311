"""Small RAG apps instrumented ONLY with another project's instrumentation, no groundtrace.

The domain is a bicycle-repair manual the repository has no other data of: six chunks whose
ids are the gold. Retrieval is BM25 (``rank_bm25``); the model is the local OpenAI-compatible
test server with :func:`reader` as its handler, an extractive reader that answers with the
context line sharing the most words with the question (so an answer follows its evidence).

* :func:`openinference_app`: OpenInference's tracer decorators (``@tracer.chain`` root,
  ``@tracer.retriever``) and ``openinference-instrumentation-openai``;
* :func:`openai_v2_app`: the official ``opentelemetry-instrumentation-openai-v2`` with
  message content on (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, which sends
  it as log records), under a plain span of the app, and -- unless ``retrieval_span=False`` --
  the retrieval as a GenAI ``retrieval`` span written with the OpenTelemetry API (the GenAI
  conventions' own span for it; no instrumentation records BM25).

Each writes its spans (and log records) to one OTLP protobuf file, as a collector would
receive them: length-delimited ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``
messages. The prompt layout is the app's own: ``Context:`` then one ``[id] text`` line per
chunk in the system message, the question as the user message.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openai
from google.protobuf.internal.encoder import _VarintBytes
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rank_bm25 import BM25Okapi

from groundtrace.sdk import semconv as sc
from tests.support.instrumented import GENAI_PREVIOUS, instrumented
from tests.support.openai_server import Reply, ServerRequest

__all__ = [
    "CASES",
    "CHUNKS",
    "openai_v2_app",
    "openinference_app",
    "openllmetry_langchain_app",
    "reader",
    "write_cases",
    "write_path_cases",
]

CHUNKS: tuple[tuple[str, str], ...] = (
    ("tube-patch", "Patch a punctured inner tube by roughing the rubber and pressing on a patch"),
    ("brake-pads", "Replace brake pads when the groove on the pad surface is worn away"),
    ("chain-oil", "Oil the chain every few hundred kilometres and wipe off the excess oil"),
    ("spoke-true", "True a wobbly wheel by tightening the spoke opposite the rub"),
    ("saddle-height", "Set saddle height so the knee is nearly straight at the bottom"),
    ("tyre-pressure", "Pump road tyres to the pressure printed on the tyre sidewall"),
)
#: (case id, question, gold chunk id, expected term of the answer)
CASES: tuple[tuple[str, str, str, str], ...] = (
    ("flat", "How do I patch a punctured inner tube?", "tube-patch", "patch"),
    ("pads", "When should I replace worn brake pads?", "brake-pads", "groove"),
    ("chain", "How often should I oil the chain?", "chain-oil", "kilometres"),
    ("wobble", "How do I true a wobbly wheel spoke?", "spoke-true", "spoke"),
    ("saddle", "What saddle height should I set?", "saddle-height", "knee"),
)
MODEL = "bike-reader"
_WORD = re.compile(r"[a-z]+")
_LINE = re.compile(r"^\[([^\]]+)\] (.+)$", re.M)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3}


def _bm25() -> BM25Okapi:
    return BM25Okapi([sorted(_words(text)) for _, text in CHUNKS])


def search(question: str, k: int, skip: int = 0) -> list[dict[str, Any]]:
    """The top ``k`` chunks by BM25 (after the first ``skip``: a retrieval regression), as
    documents with id, content and score."""
    scores = _bm25().get_scores(sorted(_words(question)))
    ranked = sorted(range(len(CHUNKS)), key=lambda i: (-scores[i], i))[skip : skip + k]
    return [
        {"id": CHUNKS[i][0], "content": CHUNKS[i][1], "score": float(scores[i])} for i in ranked
    ]


def messages(question: str, docs: Sequence[dict[str, Any]]) -> list[Any]:
    """The app's prompt: the chunks as ``[id] text`` lines in the system message."""
    context = "\n".join(f"[{d['id']}] {d['content']}" for d in docs)
    system = f"Answer from the context only.\n\nContext:\n{context}\n\nBe brief."
    return [{"role": "system", "content": system}, {"role": "user", "content": question}]


def reader(req: ServerRequest) -> Reply:
    """The server's model: the context line sharing the most words with the question."""
    msgs = req.body.get("messages") or []
    system = next((m["content"] for m in msgs if m.get("role") == "system"), "")
    question = next((m["content"] for m in reversed(msgs) if m.get("role") == "user"), "")
    lines = _LINE.findall(system)
    if not lines:
        return Reply(content="I do not know.", prompt_tokens=20, completion_tokens=4)
    asked = _words(question)
    _, best = max(lines, key=lambda line: len(asked & _words(line[1])))
    return Reply(content=best + ".", prompt_tokens=40, completion_tokens=12)


def write_cases(path: Path) -> Path:
    """The gate's / interventions' case file: question, gold chunk id, expected term."""
    rows = [
        {"id": cid, "question": q, "required_context": [gold], "expected_terms": [term]}
        for cid, q, gold, term in CASES
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_path_cases(path: Path) -> Path:
    """The paths' case file: each case must look its gold chunk's manual page up."""
    rows = [
        {"id": cid, "question": q, "required_calls": [{"name": "manual_page",
                                                         "arguments": {"chunk_id": [gold]}}]}
        for cid, q, gold, _ in CASES
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _write(out: Path, spans: InMemorySpanExporter, logs: InMemoryLogRecordExporter | None) -> Path:
    frames = [encode_spans(spans.get_finished_spans()).SerializeToString()]
    if logs is not None:
        frames.append(encode_logs(list(logs.get_finished_logs())).SerializeToString())
    out.write_bytes(b"".join(_VarintBytes(len(f)) + f for f in frames))
    return out


def openinference_app(base_url: str, out: Path, k: int = 3, skip: int = 0) -> Path:
    """Answer every case with the OpenInference-only app; its spans go to ``out``."""
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor

    exporter = InMemorySpanExporter()
    with instrumented(OpenAIInstrumentor(), exporter) as provider:
        tracer = OITracer(provider.get_tracer("bike-help"), config=TraceConfig())
        client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)

        @tracer.retriever
        def retrieve(question: str) -> list[dict[str, Any]]:
            return search(question, k, skip)

        @tracer.tool
        def manual_page(chunk_id: str) -> str:
            """The manual page of a chunk (what the paths' case file requires a call of)."""
            return f"page of {chunk_id}"

        @tracer.chain
        def answer(question: str) -> str:
            docs = retrieve(question)
            manual_page(chunk_id=docs[0]["id"])
            reply = client.chat.completions.create(
                model=MODEL,
                messages=messages(question, docs),
                temperature=0,
            )
            return reply.choices[0].message.content or ""

        for _, question, _, _ in CASES:
            answer(question)
    return _write(out, exporter, None)


def openai_v2_app(
    base_url: str, out: Path, k: int = 3, skip: int = 0, *, retrieval_span: bool = True
) -> Path:
    """Answer every case with the openai-v2-only app; its spans and logs go to ``out``."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    exporter = InMemorySpanExporter()
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    with instrumented(instrumentor, exporter, GENAI_PREVIOUS, logs) as provider:
        tracer = provider.get_tracer("bike-help")
        client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
        for _, question, _, _ in CASES:
            with tracer.start_as_current_span("handle question"):
                docs = search(question, k, skip)
                if retrieval_span:
                    with tracer.start_as_current_span("retrieval bm25") as span:
                        span.set_attribute(sc.GENAI_OPERATION_NAME, "retrieval")
                        span.set_attribute(sc.GENAI_RETRIEVAL_DOCUMENTS, json.dumps(docs))
                client.chat.completions.create(
                    model=MODEL,
                    messages=messages(question, docs),
                    temperature=0,
                )
    return _write(out, exporter, logs)


def openllmetry_langchain_app(out: Path, k: int = 3) -> Path:
    """Answer every case with a LangChain RAG chain (in-memory vector store of the chunks,
    their ids in each document's metadata, a fake chat model answering with the gold chunk)
    traced ONLY by OpenLLMetry's ``opentelemetry-instrumentation-langchain``, in a child
    process (the instrumentation leaves LangChain's callback manager wrapped after
    ``uninstrument()``, which would reach later LangChain traces of the same process)."""
    subprocess.run(
        [sys.executable, "-m", "tests.support.foreign_rag", str(out), str(k)],
        check=True, capture_output=True, timeout=120, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    return out


def _openllmetry_langchain(out: Path, k: int) -> Path:
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda
    from langchain_core.vectorstores import InMemoryVectorStore
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    texts = dict(CHUNKS)
    exporter = InMemorySpanExporter()
    with instrumented(LangchainInstrumentor(), exporter, {"TRACELOOP_TRACE_CONTENT": "true"}):
        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        store.add_documents([Document(page_content=t, metadata={"id": i}) for i, t in CHUNKS])
        retriever = store.as_retriever(search_kwargs={"k": k})
        replies = [texts[gold] + "." for _, _, gold, _ in CASES]
        prompt = ChatPromptTemplate.from_messages(
            [
                ("system", "Answer from the context only.\n\nContext:\n{context}"),
                ("user", "{question}"),
            ]
        )
        chain = prompt | FakeListChatModel(responses=replies) | StrOutputParser()

        def rag(question: str) -> str:
            docs = retriever.invoke(question)
            context = "\n".join(f"[{d.metadata['id']}] {d.page_content}" for d in docs)
            return chain.invoke({"context": context, "question": question})

        for _, question, _, _ in CASES:
            RunnableLambda(rag).invoke(question)
    return _write(out, exporter, None)


if __name__ == "__main__":
    _openllmetry_langchain(Path(sys.argv[1]), int(sys.argv[2]))
