"""Throughput of the collectors: OTLP-JSON lines -> span records -> trace model τ.

Writes a synthetic groundtrace-instrumented file (REQUEST, RETRIEVE with 5 evidence items,
SELECT, LLM with groundtrace + OpenInference + GenAI attributes, ANSWER per trace) through the
SDK's OTLP-JSON file exporter, then times, on one core:

* a plain ``json.loads`` pass over the lines (the baseline the brief compares against);
* ``read_spans`` (decode only) and ``read_traces`` (decode + group + normalise).

Usage::

    python benchmarks/bench_collectors_read.py --traces 20000
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors.readers import read_spans, read_traces
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter


def write_file(path: Path, traces: int) -> int:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    exporter = OTLPJsonFileExporter(path)
    total = 0
    for i in range(traces):
        with tracer.start_as_current_span("request") as root:
            root.set_attribute(sc.GT_ACTION, sc.Action.REQUEST)
            root.set_attribute(sc.GT_SCHEMA_VERSION, sc.SCHEMA_VERSION)
            root.set_attribute(sc.GT_REQUEST_QUERY, f"Who directed film number {i}?")
            root.set_attribute(sc.GT_APP_NAME, "bench")
            root.set_attribute(sc.OI_SPAN_KIND, "CHAIN")
            with tracer.start_as_current_span("retrieve") as span:
                evidence = [
                    {
                        "id": f"d{k}",
                        "rank": k + 1,
                        "score": 1.0 / (k + 1),
                        "title": f"Doc {k}",
                        "content": "lorem ipsum " * 20,
                    }
                    for k in range(5)
                ]
                span.set_attribute(sc.GT_ACTION, sc.Action.RETRIEVE)
                span.set_attribute(sc.GT_EVIDENCE, json.dumps(evidence))
                span.set_attribute(sc.GT_EVIDENCE_COUNT, 5)
                span.set_attribute(sc.OI_SPAN_KIND, "RETRIEVER")
                for k, doc in enumerate(evidence):
                    prefix = sc.OI_RETRIEVAL_DOCUMENTS
                    span.set_attribute(sc.indexed(prefix, k, sc.OI_DOCUMENT_ID), doc["id"])
                    span.set_attribute(sc.indexed(prefix, k, sc.OI_DOCUMENT_SCORE), doc["score"])
            with tracer.start_as_current_span("select") as span:
                span.set_attribute(sc.GT_ACTION, sc.Action.SELECT)
                span.set_attribute(sc.GT_SELECTED_IDS, ["d0", "d1"])
            with tracer.start_as_current_span("chat") as span:
                messages = [{"role": "user", "content": f"question {i}"}]
                span.set_attribute(sc.GT_ACTION, sc.Action.LLM)
                span.set_attribute(
                    sc.GT_LLM_REQUEST, json.dumps({"model": "m", "messages": messages})
                )
                span.set_attribute(sc.GT_LLM_OUTPUT_TEXT, "Steven Spielberg")
                span.set_attribute(sc.OI_SPAN_KIND, "LLM")
                span.set_attribute(sc.OI_LLM_MODEL_NAME, "m")
                span.set_attribute(sc.GENAI_OPERATION_NAME, "chat")
                span.set_attribute(sc.GENAI_USAGE_INPUT_TOKENS, 50)
                span.set_attribute(sc.GENAI_USAGE_OUTPUT_TOKENS, 5)
            with tracer.start_as_current_span("answer") as span:
                span.set_attribute(sc.GT_ACTION, sc.Action.ANSWER)
                span.set_attribute(sc.GT_ANSWER_TEXT, "Steven Spielberg")
                span.set_attribute(sc.GT_ANSWER_CONFIDENCE, 0.8)
                span.set_attribute(sc.GT_ANSWER_CITED_IDS, ["d0"])
        if len(memory.get_finished_spans()) >= 500:
            batch = memory.get_finished_spans()
            exporter.export(batch)
            total += len(batch)
            memory.clear()
    batch = memory.get_finished_spans()
    exporter.export(batch)
    exporter.shutdown()
    return total + len(batch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        spans = write_file(path, args.traces)
        size = path.stat().st_size
        t0 = time.perf_counter()
        with open(path, "rb") as handle:
            for line in handle:
                json.loads(line)
        t_json = time.perf_counter() - t0
        t0 = time.perf_counter()
        n_spans = sum(1 for _ in read_spans([path]))
        t_spans = time.perf_counter() - t0
        t0 = time.perf_counter()
        n_traces = sum(1 for _ in read_traces([path]))
        t_traces = time.perf_counter() - t0
    print(f"file: {spans} spans, {args.traces} traces, {size / 1e6:.1f} MB")
    print(f"json.loads pass : {t_json:.2f}s  {spans / t_json:,.0f} spans/s")
    print(f"read_spans      : {t_spans:.2f}s  {n_spans / t_spans:,.0f} spans/s")
    print(
        f"read_traces (τ) : {t_traces:.2f}s  {n_spans / t_traces:,.0f} spans/s  "
        f"{n_traces} traces  ratio to json.loads: {t_traces / t_json:.2f}x"
    )


if __name__ == "__main__":
    main()
