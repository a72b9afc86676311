"""What one damaged byte in a trace file costs, and what the file exporter's lines cost; prints
one JSON object.

* ``damage``: 12 conversations (a root span and 5 steps each, ~200-character texts) exported by
  :class:`~groundtrace.sdk.file_exporter.OTLPJsonFileExporter` as one batch (a short run with
  the default batching) and in batches of 8 spans; then, at each of ``--places`` evenly spaced
  places in turn, one byte set to NUL (no JSON text holds a raw NUL) and the file read back
  with the collectors' reader. Reported per batching: the conversations lost (not read back
  complete) per damaged byte, mean and worst, and the lines of the file.
* ``cost``: the exporter's time per span (encode and write, median of ``--repeats``) and bytes
  per span, for a batch of 512 spans of 12 traces and one of 512 one-span traces.

Run it from the repository root; with another checkout's interpreter (or ``benchmarks.compare``)
it measures that checkout's exporter::

    python -m benchmarks.file_exporter_damage [--places 240] [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors.readers import ReadReport, read_spans
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter


def _spans(traces: int, steps: int) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({sc.SERVICE_NAME: "vet-clinic"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("groundtrace", "0.1.0")
    for t in range(traces):
        with tracer.start_as_current_span("conversation") as root:
            root.set_attribute("input", f"conversation {t}: " + "book a visit for my pet " * 8)
            for s in range(steps):
                with tracer.start_as_current_span(f"tool-{s}") as span:
                    span.set_attribute("output", f"{t}/{s} " + "slot available at 10:30 " * 8)
    return list(memory.get_finished_spans())


def _write(path: Path, spans: list[ReadableSpan], batch: int) -> None:
    exporter = OTLPJsonFileExporter(path)
    for start in range(0, len(spans), batch):
        exporter.export(spans[start : start + batch])
    exporter.shutdown()


def _complete(path: Path, expected: dict[str, int]) -> int:
    counts: dict[str, int] = {}
    for span in read_spans([path], report=ReadReport()):
        counts[span.trace_id] = counts.get(span.trace_id, 0) + 1
    return sum(1 for trace_id, n in expected.items() if counts.get(trace_id) == n)


def _damage(folder: Path, places: int) -> dict[str, Any]:
    spans = _spans(12, 5)
    expected: dict[str, int] = {}
    for span in spans:
        key = format(span.get_span_context().trace_id, "032x")
        expected[key] = expected.get(key, 0) + 1
    out: dict[str, Any] = {}
    for label, batch in (("one_batch", len(spans)), ("batches_of_8", 8)):
        clean = folder / f"{label}.jsonl"
        _write(clean, spans, batch)
        data = clean.read_bytes()
        assert _complete(clean, expected) == len(expected)
        damaged = folder / "damaged.jsonl"
        lost = []
        for k in range(places):
            at = (2 * k + 1) * len(data) // (2 * places)
            damaged.write_bytes(data[:at] + b"\x00" + data[at + 1 :])
            lost.append(len(expected) - _complete(damaged, expected))
        out[label] = {
            "lines": data.count(b"\n"),
            "conversations": len(expected),
            "damaged_places": places,
            "lost_per_damaged_byte_mean": round(statistics.fmean(lost), 3),
            "lost_per_damaged_byte_worst": max(lost),
        }
    return out


def _cost(folder: Path, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    shapes = (("12_traces", _spans(12, 512 // 12)[:512]), ("512_traces", _spans(512, 0)))
    for label, spans in shapes:
        times = []
        size = 0
        for r in range(repeats):
            path = folder / f"cost-{label}-{r}.jsonl"
            exporter = OTLPJsonFileExporter(path)
            begin = time.perf_counter()
            exporter.export(spans)
            times.append(time.perf_counter() - begin)
            exporter.shutdown()
            size = path.stat().st_size
            path.unlink()
        out[label] = {
            "spans": len(spans),
            "export_us_per_span": round(statistics.median(times) / len(spans) * 1e6, 3),
            "bytes_per_span": round(size / len(spans), 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="24 places, 5 repeats")
    args = parser.parse_args()
    places, repeats = (24, 5) if args.quick else (args.places, args.repeats)
    with tempfile.TemporaryDirectory() as folder:
        report = {"damage": _damage(Path(folder), places), "cost": _cost(Path(folder), repeats)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
