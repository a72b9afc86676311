"""What the REQUEST span says the app returned: a dataclass result is JSON, not its repr.

Backends show ``output.value`` with its ``output.mime_type`` (Phoenix renders
``application/json`` as a JSON tree); the example app's request returns a slotted dataclass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc


@dataclass(frozen=True, slots=True)
class Result:
    case_id: str
    answer: str
    confidence: float
    used: tuple[str, ...]


def test_a_slotted_dataclass_result_is_recorded_as_a_json_object() -> None:
    memory = InMemorySpanExporter()
    gt.configure(exporter=memory, capture_content=True)
    try:

        @gt.request(app_name="output-test")
        def handle(question: str, case_id: str) -> Result:
            return Result(case_id, "Paris", 0.5, ("p0", "p1"))

        handle("Where?", case_id="q1")
    finally:
        gt.shutdown()
    (span,) = memory.get_finished_spans()
    attributes = span.attributes or {}
    assert attributes[sc.OI_OUTPUT_MIME_TYPE] == "application/json"
    assert json.loads(str(attributes[sc.OI_OUTPUT_VALUE])) == {
        "case_id": "q1", "answer": "Paris", "confidence": 0.5, "used": ["p0", "p1"],
    }  # fmt: skip


def test_the_example_app_result_reads_as_json() -> None:
    from groundtrace.examples.hotpot_rag.app import CaseResult
    from groundtrace.sdk._attributes import safe_json

    text = safe_json(CaseResult("q1", "yes", 0.8, ("p0",), ("p0", "p1")))
    assert json.loads(text)["used_chunks"] == ["p0"]
