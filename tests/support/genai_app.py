"""A small app traced by groundtrace's own SDK (decorators, the openai and rank_bm25
instrumentors), run with each OpenTelemetry GenAI attribute set.

Usage::

    from tests.support.genai_app import run_app

    spans = run_app(GenAIConventions.BOTH, server)  # finished spans of one request
"""

from __future__ import annotations

from typing import Any

import openai
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor
from tests.support.openai_server import OpenAICompatServer

__all__ = ["CORPUS", "QUESTION", "run_app"]

QUESTION = "Who directed Jaws?"
CORPUS = ["jaws is a film by steven spielberg", "alien is a film by ridley scott"]


@gt.request(app_name="films", app_version="1")
def _app(query: str, client: openai.OpenAI, bm25: BM25Okapi) -> str:
    docs = _search(query)
    bm25.get_top_n(query.lower().split(), CORPUS, n=1)
    _lookup("Jaws", call_id="call_1")
    out = client.responses.create(
        model="m", instructions="Answer briefly.", input=query, temperature=0
    )
    chat = client.chat.completions.create(
        model="m",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": query}],
        tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}],
    )
    del chat
    return _answer(query, docs, out.output_text)


@gt.retrieve(retriever="bm25", k=2, data_source="films")
def _search(query: str) -> list[dict[str, Any]]:
    return [{"id": "d1", "content": CORPUS[0], "score": 2.0}]


@gt.tool
def _lookup(title: str, call_id: str | None = None) -> str:
    """Look a film up."""
    return "Steven Spielberg"


@gt.answer
def _answer(query: str, evidence: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return {"text": text, "confidence": 0.5, "cited_ids": ["d1"]}


def run_app(mode: sc.GenAIConventions, srv: OpenAICompatServer) -> list[ReadableSpan]:
    """The finished spans of one request, every content field captured; the settings in
    force before are put back."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, genai=mode), provider)
    openai_inst, bm25_inst = OpenAIInstrumentor(), RankBM25Instrumentor()
    openai_inst.instrument()
    bm25_inst.instrument()
    try:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        _app(QUESTION, client, BM25Okapi([d.split() for d in CORPUS]))
    finally:
        openai_inst.uninstrument()
        bm25_inst.uninstrument()
        provider.shutdown()
        _runtime.install(old_settings, old_provider)
    return list(exporter.get_finished_spans())
