"""SDK → OTLP/HTTP exporter → receiver → files → readers → τ, equal to τ of the in-memory spans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.collectors import ReadReport, SpanEvent, SpanRecord, SpanStatus, read_traces
from groundtrace.collectors.normalize import build_traces
from groundtrace.collectors.receiver import Receiver
from tests.support.data import HOTPOT


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def record_of(span: ReadableSpan) -> SpanRecord:
    """An in-memory SDK span as a SpanRecord, without going through any OTLP encoding."""
    context = span.context
    assert context is not None
    return SpanRecord(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_span_id=f"{span.parent.span_id:016x}" if span.parent else None,
        name=span.name,
        start_time_unix_nano=span.start_time or 0,
        end_time_unix_nano=span.end_time or 0,
        attributes={k: _value(v) for k, v in (span.attributes or {}).items()},
        status=SpanStatus(span.status.status_code.name, span.status.description or ""),
        events=[
            SpanEvent(e.name, e.timestamp, {k: _value(v) for k, v in (e.attributes or {}).items()})
            for e in span.events
        ],
        kind=span.kind.name,
        resource={k: _value(v) for k, v in span.resource.attributes.items()},
        scope_name=span.instrumentation_scope.name if span.instrumentation_scope else "",
        scope_version=(span.instrumentation_scope.version or "")
        if span.instrumentation_scope
        else "",
    )


def without_locations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_locations(v) for k, v in value.items() if k != "location"}
    if isinstance(value, list):
        return [without_locations(v) for v in value]
    return value


def run_app(cases: list[dict[str, Any]]) -> None:
    @gt.retrieve(retriever="bm25", k=4)
    def search(question: str, case: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"id": f"p{i}", "title": title, "content": " ".join(sentences), "score": 10.0 - i}
            for i, (title, sentences) in enumerate(case["context"][:4])
        ]

    @gt.answer
    def respond(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
        return {"answer": "an answer", "confidence": 0.75, "cited_ids": [evidence[0]["id"]]}

    @gt.request(app_version="1.2.3")
    def handle(question: str, case: dict[str, Any], case_id: str) -> str:
        return str(respond(question, search(question, case))["answer"])

    for case in cases:
        handle(case["question"], case, case_id=case["_id"])


def test_exported_spans_come_back_as_the_same_traces(tmp_path: Path) -> None:
    lines = HOTPOT.open(encoding="utf-8")
    cases = [json.loads(next(lines)) for _ in range(5)]
    lines.close()
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    with Receiver("127.0.0.1", 0, tmp_path / "out") as receiver:
        gt.configure(
            service_name="roundtrip-app",
            tracer_provider=provider,
            exporter=[memory, OTLPSpanExporter(endpoint=receiver.endpoint)],
            capture_content=True,
            redact=False,
        )
        try:
            run_app(cases)
        finally:
            gt.shutdown()
            provider.shutdown()
    spans = memory.get_finished_spans()
    assert len(spans) == 5 * 3
    expected = {t.trace_id: t for t in build_traces(record_of(s) for s in spans)}
    report = ReadReport()
    got = {t.trace_id: t for t in read_traces([tmp_path / "out"], report=report)}
    assert not report.errors
    assert set(got) == set(expected) and len(got) == 5
    for trace_id, trace in got.items():
        assert without_locations(trace.to_dict()) == without_locations(expected[trace_id].to_dict())
    # and τ carries what the app did
    queries = {t.request.query for t in got.values()}
    assert queries == {c["question"] for c in cases}
    one = next(iter(got.values()))
    assert one.answer == "an answer" and one.confidence == 0.75
    assert [e.id for e in one.evidence] == ["p0", "p1", "p2", "p3"]
