"""A RAG app traced with OpenLLMetry's decorators, run in its own process.

``Traceloop.init`` configures process-wide state (its tracer, every instrumentation it
finds), so :func:`tests.support.instrumented.openllmetry_decorators` runs this module as a
child process::

    python -m tests.support.traceloop_app OUT.pb

It writes the finished spans to ``OUT.pb`` as one OTLP ``ExportTraceServiceRequest``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import openai
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.instrumented import DOCS, MESSAGES, QUERY, handler
from tests.support.openai_server import OpenAICompatServer

__all__ = ["main"]


def main(out: Path) -> None:
    """Run the app once and write its spans to ``out``."""
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import task, tool, workflow

    exporter = InMemorySpanExporter()
    Traceloop.init(app_name="rag", exporter=exporter, disable_batch=True, telemetry_enabled=False)

    with OpenAICompatServer(handler=handler) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)

        @task(name="retrieve")
        def retrieve(query: str) -> list[str]:
            return [text for _, text in DOCS]

        @tool(name="lookup")
        def lookup(title: str) -> dict[str, str]:
            return {"director": "Steven Spielberg"}

        @workflow(name="rag")
        def rag(query: str, k: int = 2) -> str:
            retrieve(query)
            lookup(title="Jaws")
            reply = client.chat.completions.create(model="local-model", messages=MESSAGES)
            return reply.choices[0].message.content or ""

        rag(QUERY)
    out.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
