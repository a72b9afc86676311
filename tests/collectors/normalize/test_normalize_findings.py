"""Normalisation findings: what is missing or inconsistent is reported, never guessed."""

from __future__ import annotations

import json

import pytest

from groundtrace.collectors import SpanRecord, Trace, build_traces
from groundtrace.collectors.normalize import _stream
from groundtrace.collectors.spans import SourceLocation
from groundtrace.sdk import semconv as sc
from tests.support.otlp_spans import TRACE_A, TRACE_B, SpanSpec, agent_trace, rag_trace, sid


def _records(specs: list[SpanSpec]) -> list[SpanRecord]:
    return [
        SpanRecord(
            trace_id=s.trace_id,
            span_id=s.span_id,
            parent_span_id=s.parent,
            name=s.name,
            start_time_unix_nano=s.start,
            end_time_unix_nano=s.end,
            attributes=dict(s.attributes),
            location=SourceLocation("mem.jsonl", i + 1),
        )
        for i, s in enumerate(specs)
    ]


def _one(specs: list[SpanSpec]) -> Trace:
    (trace,) = list(build_traces(_records(specs)))
    return trace


def _kinds(trace: Trace) -> list[str]:
    return [f.kind for f in trace.findings]


def test_complete_rag_trace_is_rebuilt() -> None:
    trace = _one(rag_trace())
    assert trace.request.query == "Who directed Jaws?"
    assert trace.request.case_id == "case-1" and trace.request.app_version == "1.2.0"
    assert [e.id for e in trace.evidence] == ["d1", "d2"]
    assert trace.evidence[1].content is None and trace.evidence[1].content_hash == "sha256:ab12"
    assert trace.selected_ids == ("d1",)
    assert (trace.answer, trace.confidence, trace.cited_ids) == ("Steven Spielberg", 0.9, ("d1",))
    (llm,) = trace.llm_calls
    assert llm.model == "local-model" and llm.params == {"temperature": 0.0, "seed": 7}
    assert [m.role for m in llm.messages] == ["system", "user"]
    assert llm.usage.input_tokens == 42 and llm.latency_ns == 670
    assert trace.entrypoint is not None and trace.entrypoint.kwargs == {"style": "short"}
    assert [s.action for s in trace.steps] == ["REQUEST", "RETRIEVE", "SELECT", "LLM", "ANSWER"]
    # d2 is recorded by reference only: that is the one honest finding
    assert _kinds(trace) == ["content_not_captured"]


def test_confidence_as_string_is_a_finding_naming_the_field() -> None:
    specs = rag_trace()
    specs[4].attributes[sc.GT_ANSWER_CONFIDENCE] = "0.9"
    trace = _one(specs)
    assert trace.confidence is None
    (bad,) = trace.findings_of("bad_attribute_type")
    assert bad.field == sc.GT_ANSWER_CONFIDENCE and bad.span_id == sid(5)
    assert bad.location == "mem.jsonl:5"
    assert trace.findings_of("no_confidence")


def test_confidence_out_of_range() -> None:
    specs = rag_trace()
    specs[4].attributes[sc.GT_ANSWER_CONFIDENCE] = 1.7
    trace = _one(specs)
    assert trace.confidence is None and trace.findings_of("confidence_out_of_range")


def test_malformed_evidence_json_is_a_finding() -> None:
    specs = rag_trace()
    specs[1].attributes[sc.GT_EVIDENCE] = '[{"id": "d1", '
    trace = _one(specs)
    assert trace.evidence == ()
    (bad,) = trace.findings_of("bad_attribute_type")
    assert bad.field == sc.GT_EVIDENCE and "not valid JSON" in bad.message


def test_evidence_item_with_wrong_field_type_keeps_the_rest() -> None:
    specs = rag_trace()
    specs[1].attributes[sc.GT_EVIDENCE] = json.dumps([{"id": "d1", "score": "high"}, 7])
    trace = _one(specs)
    assert [(e.id, e.score) for e in trace.evidence] == [("d1", None)]
    fields = [f.field for f in trace.findings_of("bad_attribute_type")]
    assert fields == [f"{sc.GT_EVIDENCE}[0].score", f"{sc.GT_EVIDENCE}[1]"]


def test_unknown_action() -> None:
    specs = rag_trace()
    specs[2].attributes[sc.GT_ACTION] = "PONDER"
    trace = _one(specs)
    assert trace.steps[2].action is None
    (finding,) = trace.findings_of("unknown_action")
    assert "PONDER" in finding.message and finding.span_id == sid(3)
    assert trace.selected_ids is None


def test_duplicate_span_id_keeps_first_and_reports() -> None:
    specs = rag_trace()
    dup = SpanSpec(
        sid(2), sid(1), "again", specs[1].start, specs[1].end, {sc.GT_ACTION: "RETRIEVE"}
    )
    trace = _one([*specs, dup])
    assert len(trace.steps) == 5 and len(trace.evidence) == 2
    (finding,) = trace.findings_of("duplicate_span_id")
    assert finding.span_id == sid(2) and "mem.jsonl:2" in finding.message


def test_orphan_span_and_missing_root() -> None:
    specs = rag_trace()[1:]  # drop the root: every span now points at a missing parent
    trace = _one(specs)
    assert len(trace.findings_of("orphan_span")) == 4
    assert trace.findings_of("no_root") and trace.findings_of("no_query")


def test_clock_skew_end_before_start_and_outside_parent() -> None:
    specs = rag_trace()
    specs[2].end = specs[2].start - 5
    specs[3].end = specs[0].end + 10
    trace = _one(specs)
    skewed = {f.span_id: f.message for f in trace.findings_of("clock_skew")}
    assert set(skewed) == {sid(3), sid(4)}
    assert "ends before it starts" in skewed[sid(3)]
    assert "outside the time window" in skewed[sid(4)]


def test_truncated_attribute_and_huge_values() -> None:
    specs = rag_trace()
    huge = "x" * 2_000_000
    specs[3].attributes[sc.GT_LLM_OUTPUT_TEXT] = huge
    specs[3].attributes[sc.GT_TRUNCATED] = [sc.GT_LLM_REQUEST]
    trace = _one(specs)
    assert trace.llm_calls[0].output_text == huge
    (finding,) = trace.findings_of("truncated_attribute")
    assert finding.field == sc.GT_LLM_REQUEST
    # bulky strings stay out of the step attribute subset
    assert sc.GT_LLM_OUTPUT_TEXT not in trace.steps[3].attributes


def test_multiple_answers_the_last_wins() -> None:
    specs = rag_trace()
    late = SpanSpec(
        sid(6),
        sid(1),
        "answer",
        specs[4].end + 1,
        specs[4].end + 2,
        {
            sc.GT_ACTION: "ANSWER",
            sc.GT_ANSWER_TEXT: "Spielberg",
            sc.GT_ANSWER_CONFIDENCE: 0.5,
        },
    )
    specs[0].end = late.end + 1
    trace = _one([*specs, late])
    assert trace.answer == "Spielberg" and trace.confidence == 0.5
    assert trace.findings_of("multiple_answers")


def test_agent_trace_without_retrieval_reports_it() -> None:
    trace = _one(agent_trace())
    assert _kinds(trace) == ["no_retrieval"]
    ok, failed = trace.tool_calls
    assert ok.arguments == {"path": "/docs/returns.md"} and ok.paths_read == ("/docs/returns.md",)
    assert failed.status == "error" and failed.error_type == "FileNotFoundError"
    assert trace.replay is not None and trace.replay.replay_of == TRACE_A
    assert trace.replay.operator == "REMOVE" and trace.replay.target_id == "d2"


def test_content_capture_off_is_reported() -> None:
    specs = agent_trace()
    specs[1].attributes[sc.GT_CONTENT_CAPTURED] = False
    del specs[1].attributes[sc.GT_TOOL_RESULT_CONTENT]
    trace = _one(specs)
    (finding,) = trace.findings_of("content_not_captured")
    assert sid(12) in finding.message


def test_window_emits_completed_traces_early_and_late_spans_split() -> None:
    first = _records(rag_trace(TRACE_A))
    second = _records(agent_trace(TRACE_B))
    late = SpanRecord(TRACE_A, sid(99), sid(1), "late", 1, 2, {sc.GT_ACTION: "VERIFY"})
    emitted: list[str] = []
    stream = iter([*first, *second, late])
    traces = []
    for trace in build_traces(stream, window=3):
        emitted.append(trace.trace_id)
        traces.append(trace)
    assert emitted == [TRACE_A, TRACE_B, TRACE_A]
    assert traces[2].findings_of("split_trace") and traces[2].findings_of("no_root")
    assert not traces[0].findings_of("split_trace")


def test_only_the_last_emitted_ids_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stream, "EMITTED_MEMORY", 1)
    late = SpanRecord(TRACE_A, sid(99), sid(1), "late", 1, 2, {sc.GT_ACTION: "VERIFY"})
    stream = [*_records(rag_trace(TRACE_A)), *_records(agent_trace(TRACE_B)), late]
    traces = list(build_traces(iter(stream), window=3))
    assert [t.trace_id for t in traces] == [TRACE_A, TRACE_B, TRACE_A]
    # TRACE_A's id was forgotten when TRACE_B was emitted: no split finding, still no root
    assert not traces[2].findings_of("split_trace") and traces[2].findings_of("no_root")


def test_without_window_expiry_a_trace_spread_over_the_stream_stays_whole() -> None:
    a, b = _records(rag_trace(TRACE_A)), _records(agent_trace(TRACE_B))
    interleaved = [x for pair in zip(a, b, strict=False) for x in pair] + a[len(b) :]
    traces = list(build_traces(interleaved))
    assert sorted(len(t.steps) for t in traces) == [4, 5]


def test_max_pending_spans_bounds_the_buffer() -> None:
    records = _records(rag_trace(TRACE_A)) + _records(agent_trace(TRACE_B))
    traces = list(build_traces(iter(records), max_pending_spans=5))
    assert [t.trace_id for t in traces] == [TRACE_A, TRACE_B]


def test_bad_window_is_rejected() -> None:
    with pytest.raises(ValueError):
        list(build_traces([], window=0))
