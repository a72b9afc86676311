"""``groundtrace attribution --write-back phoenix`` against a real Phoenix, under ``unshare -n``.

1. starts Phoenix and runs the HotpotQA example app (the in-process lexical reader) on two
   questions, its spans to Phoenix and to an OTLP-JSON file (as
   :mod:`tests.integration.phoenix_writeback_scenario` does), and waits for every span;
2. runs ``groundtrace attribution`` on that file, scored by the endpoint tier against the
   loopback toy server of ``tests/analyzer/attribution/test_endpoint_scorer.py`` (a server
   returning prompt log-probabilities, as vLLM does), with ``--write-back phoenix``; reads the
   document annotations back through Phoenix's GraphQL API; runs it again into another folder
   and reads again (a rerun must add nothing);
3. prints ONE JSON line with what it found.

Usage::

    unshare -n sh -c \
        'ip link set lo up && python -m tests.integration.phoenix_attribution_scenario DATA'
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

from groundtrace.collectors import ReadReport, read_traces
from tests.analyzer.attribution.test_endpoint_scorer import _Handler, _Server
from tests.integration.phoenix_scenario import (
    INGEST_TIMEOUT_S,
    phoenix_spans,
    run_with_phoenix,
    wait_until,
)
from tests.integration.phoenix_writeback_scenario import (
    N_QUESTIONS,
    PROJECT,
    cli,
    document_annotations,
    document_view,
    phoenix_documents,
)


def run_app(url: str, data_file: Path, spans: Path, cases_file: Path) -> int:
    """The HotpotQA app on the first questions, its OpenAI client instrumented (the answer
    call's prompt is what is attributed): spans to Phoenix and to ``spans``; span count."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import groundtrace.sdk as gt
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import case_record, load_cases
    from groundtrace.sdk import semconv as sc
    from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor

    cases = load_cases(data_file, limit=N_QUESTIONS)
    cases_file.write_text("".join(json.dumps(case_record(c)) + "\n" for c in cases))
    memory = InMemorySpanExporter()
    resource = Resource.create({sc.SERVICE_NAME: app.APP_NAME, sc.OI_PROJECT_NAME: PROJECT})
    provider = TracerProvider(resource=resource)
    gt.configure(
        tracer_provider=provider,
        exporter=[memory, OTLPJsonFileExporter(spans), OTLPSpanExporter(f"{url}/v1/traces")],
        capture_content=True,
        redact=False,
    )
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        for case in cases:
            app.run_case(case, model="lexical", base_url=app.LEXICAL_BASE_URL)
    finally:
        instrumentor.uninstrument()
        gt.shutdown()
        provider.shutdown()
    return len(memory.get_finished_spans())


def scenario(url: str, data_file: Path, workdir: Path) -> dict[str, Any]:
    spans, cases_file = workdir / "spans.jsonl", workdir / "cases.jsonl"
    exported = run_app(url, data_file, spans, cases_file)
    wait_until(lambda: len(phoenix_spans(url)) >= exported, INGEST_TIMEOUT_S, "ingestion")
    traces = list(read_traces([str(spans)], report=ReadReport()))
    retrieval = sorted({e.step_span_id for t in traces for e in t.evidence})
    server = _Server(("127.0.0.1", 0), _Handler)
    server.bodies = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def attribute(tag: str) -> Any:
        return cli("attribution", str(spans), "--endpoint", endpoint, "--out",
                   str(workdir / f"attr-{tag}"), "--write-back", "phoenix", "--phoenix-url",
                   url)  # fmt: skip

    first = attribute("1")
    documents_1 = document_annotations(url, retrieval)
    second = attribute("2")
    documents_2 = document_annotations(url, retrieval)
    server.shutdown()
    report = workdir / "attr-1" / "attribution.json"
    documents = {
        t.trace_id: {
            e.step_span_id: [x.id for x in t.evidence if x.step_span_id == e.step_span_id]
            for e in t.evidence
        }
        for t in traces
    }
    return {
        "returncodes": [first.returncode, second.returncode],
        "stderr": [first.stderr[-800:], second.stderr[-800:]],
        "rows": json.loads(report.read_text())["rows"] if report.is_file() else [],
        "documents": documents,
        "documents_first": document_view(documents_1),
        "documents_second": document_view(documents_2),
        "phoenix_documents": phoenix_documents(url, retrieval),
    }


if __name__ == "__main__":
    print(json.dumps(run_with_phoenix(scenario, Path(sys.argv[1])), default=str))
    sys.exit(0)
