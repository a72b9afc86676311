"""Throughput of the collectors: OTLP-JSON lines -> span records -> trace model τ.

Writes a synthetic groundtrace-instrumented file (REQUEST, RETRIEVE with 5 evidence items,
SELECT, LLM with groundtrace + OpenInference + GenAI attributes, ANSWER per trace; ~1 KB per
span) through the SDK's OTLP-JSON file exporter, then times, in one process on one core,
interleaved round by round (median of ``--repeats`` rounds, CPU seconds of this process --
wall time on a shared machine measures the neighbours as much as the code):

* floor A: a plain parse of every line with orjson (the fastest generic parser here; the
  readers decode canonical lines with msgspec typed structs and fall back to orjson);
* floor B: the same plain parse with the stdlib ``json.loads``;
* ``read_spans`` (parse + decode into span records);
* ``read_traces`` (parse + decode + group + normalise into τ).

The target of the issue is τ >= 50k spans/s on one core and within 3x of the plain parse;
the ratio is printed against both floors, labelled. ``--gc-off`` adds one informational
τ figure with the cyclic garbage collector disabled (not a target figure: the readers
never change the collector's settings).

Usage::

    python benchmarks/bench_collectors_read.py --traces 20000 --repeats 5
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
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


def _reader_json_library() -> str:
    return "msgspec typed structs (fallback: orjson and the checked decoder)"


def _floor(path: Path, loads: Callable[[bytes], Any]) -> int:
    lines = 0
    with open(path, "rb") as handle:
        for line in handle:
            loads(line)
            lines += 1
    return lines


def _cpu(run: Callable[[], int]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    count = run()
    return time.process_time() - cpu, time.perf_counter() - wall, count


def measure(path: Path, repeats: int) -> dict[str, Any]:
    """Median CPU and wall seconds of each stage, interleaved over ``repeats`` rounds."""
    stages: dict[str, Callable[[], int]] = {
        "floor_orjson": lambda: _floor(path, orjson.loads),
        "floor_stdlib_json": lambda: _floor(path, json.loads),
        "read_spans": lambda: sum(1 for _ in read_spans([path])),
        "read_traces": lambda: sum(1 for _ in read_traces([path])),
    }
    cpu: dict[str, list[float]] = {k: [] for k in stages}
    wall: dict[str, list[float]] = {k: [] for k in stages}
    counts: dict[str, int] = {}
    for _ in range(repeats):
        for name, run in stages.items():
            c, w, counts[name] = _cpu(run)
            cpu[name].append(c)
            wall[name].append(w)
    return {
        "cpu": {k: statistics.median(v) for k, v in cpu.items()},
        "wall": {k: statistics.median(v) for k, v in wall.items()},
        "spans": counts["read_spans"],
        "traces": counts["read_traces"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--file", type=Path, help="reuse (or create) this file")
    parser.add_argument("--gc-off", action="store_true", help="add an informational GC-off run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or Path(tmp) / "bench.jsonl"
        if not path.exists():
            write_file(path, args.traces)
        size = path.stat().st_size
        result = measure(path, args.repeats)
        gc_off = None
        if args.gc_off:
            gc.disable()
            try:
                gc_off = statistics.median(
                    _cpu(lambda: sum(1 for _ in read_traces([path])))[0]
                    for _ in range(args.repeats)
                )
            finally:
                gc.enable()
    spans = result["spans"]
    cpu, wall = result["cpu"], result["wall"]
    rate = {k: spans / v for k, v in cpu.items()}
    print(
        f"file: {spans} spans, {result['traces']} traces, {size / 1e6:.1f} MB "
        f"({size / spans:,.0f} B/span); median of {args.repeats} interleaved rounds, "
        "CPU seconds of this process"
    )
    print(f"readers parse with: {_reader_json_library()}")
    labels = {
        "floor_orjson": "floor A: orjson.loads pass",
        "floor_stdlib_json": "floor B: json.loads pass (stdlib)",
        "read_spans": "read_spans (parse + decode)",
        "read_traces": "read_traces (τ: + group + normalise)",
    }
    for key, label in labels.items():
        print(
            f"  {label:44s} {cpu[key]:6.3f} s cpu  {rate[key]:>9,.0f} spans/s"
            f"   (wall {wall[key]:6.3f} s)"
        )
    build = cpu["read_traces"] - cpu["read_spans"]
    print(
        f"  stages: parse + decode {cpu['read_spans']:.3f} s, group + normalise {build:.3f} s"
        f" ({spans / build:,.0f} spans/s for the τ-building stage alone)"
    )
    tau = cpu["read_traces"]
    ratio_a = tau / cpu["floor_orjson"]
    ratio_b = tau / cpu["floor_stdlib_json"]
    print(f"τ vs floor A (orjson):                              {ratio_a:.2f}x")
    print(f"τ vs floor B (stdlib json):                        {ratio_b:.2f}x")
    print(
        f"targets: τ >= 50k spans/s: {'met' if rate['read_traces'] >= 50_000 else 'NOT met'}"
        f" ({rate['read_traces']:,.0f}); within 3x of floor A: "
        f"{'met' if ratio_a <= 3 else 'NOT met'}; within 3x of floor B: "
        f"{'met' if ratio_b <= 3 else 'NOT met'}"
    )
    if gc_off is not None:
        print(
            f"informational, cyclic GC disabled: read_traces {gc_off:.3f} s cpu "
            f"{spans / gc_off:,.0f} spans/s ({gc_off / cpu['floor_orjson']:.2f}x floor A)"
        )


if __name__ == "__main__":
    main()
