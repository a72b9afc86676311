"""Bad input: precise errors with file and line, and every valid trace is still read."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from google.protobuf.internal.encoder import _VarintBytes

from groundtrace.collectors import ReadReport, TraceReadError, read_traces
from tests.support.otlp_spans import (
    TRACE_A,
    TRACE_B,
    agent_trace,
    rag_trace,
    request_json,
    request_proto,
)


def _lines(*objs: object) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)


def test_truncated_and_invalid_json_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    good_a = json.dumps(request_json(rag_trace()))
    good_b = json.dumps(request_json(agent_trace()))
    path = tmp_path / "bad.jsonl"
    path.write_text(_lines(good_a, good_b[: len(good_b) // 2], "{not json", good_b))
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    assert sorted(t.trace_id for t in traces) == [TRACE_A, TRACE_B]
    assert [(e.path, e.line) for e in report.errors] == [(str(path), 2), (str(path), 3)]
    assert all("invalid JSON" in e.reason for e in report.errors)


def test_without_a_report_the_first_error_raises(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_lines(json.dumps(request_json(rag_trace())), "[1, 2"))
    with pytest.raises(TraceReadError) as info:
        list(read_traces([path]))
    assert info.value.line == 2 and info.value.path == str(path)
    assert f"{path}:2" in str(info.value)


def test_a_span_with_a_bad_id_is_skipped_a_bad_field_only_drops_the_field(
    tmp_path: Path,
) -> None:
    obj = request_json(rag_trace())
    spans = obj["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[2]["spanId"] = "xyz"  # neither hex nor base64 of 8 bytes
    spans[3]["attributes"].append({"key": "k", "value": {"intValue": "12x"}})
    path = tmp_path / "t.jsonl"
    path.write_text(_lines(obj))
    report = ReadReport()
    (trace,) = list(read_traces([path], report=report))
    assert [s.name for s in trace.steps] == ["request", "bm25", "chat local-model", "answer"]
    assert len(trace.llm_calls) == 1  # the LLM call with the bad attribute is still there
    fields = [e.field for e in report.errors]
    assert fields == [
        "resourceSpans[0].scopeSpans[0].spans[2].spanId",
        "resourceSpans[0].scopeSpans[0].spans[3].attributes",
    ]
    assert all(e.line == 1 for e in report.errors)
    (finding,) = trace.findings_of("malformed_field")
    assert finding.field == "resourceSpans[0].scopeSpans[0].spans[3].attributes"
    assert finding.location == f"{path}:1" and finding.span_id == spans[3]["spanId"]
    assert "'k'" in finding.message


_SPAN3 = "resourceSpans[0].scopeSpans[0].spans[3]"


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("intValue", "12x", f"{_SPAN3}.attributes"),
        ("kind", 9, f"{_SPAN3}.kind"),
        ("kind", "SPAN_KIND_SIDEWAYS", f"{_SPAN3}.kind"),
        ("startTimeUnixNano", "yesterday", f"{_SPAN3}.startTimeUnixNano"),
        ("endTimeUnixNano", 1.5, f"{_SPAN3}.endTimeUnixNano"),
        ("status", {"code": 7}, f"{_SPAN3}.status.code"),
        ("status", "broken", f"{_SPAN3}.status"),
        ("events", [{"name": "e", "timeUnixNano": "soon"}], f"{_SPAN3}.events[0].timeUnixNano"),
        ("events", [7], f"{_SPAN3}.events[0]"),
        ("attributes", {"not": "a list"}, f"{_SPAN3}.attributes"),
    ],
)
def test_each_bad_field_keeps_the_llm_span_and_is_a_finding(
    tmp_path: Path, field: str, value: object, where: str
) -> None:
    obj = request_json(rag_trace())
    span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][3]
    if field == "intValue":
        span["attributes"].append({"key": "n", "value": {"intValue": value}})
    else:
        span[field] = value
    path = tmp_path / "t.jsonl"
    path.write_text(_lines(obj))
    report = ReadReport()
    (trace,) = list(read_traces([path], report=report))
    assert "chat local-model" in [s.name for s in trace.steps]
    (error,) = report.errors
    assert (error.path, error.line, error.field) == (str(path), 1, where)
    (finding,) = trace.findings_of("malformed_field")
    assert (finding.location, finding.field) == (f"{path}:1", where)
    assert finding.span_id == span["spanId"]
    if field != "attributes":  # only the bad field is dropped: the span is still interpreted
        assert len(trace.llm_calls) == 1


def test_a_bad_resource_attribute_is_dropped_and_reported_once(tmp_path: Path) -> None:
    obj = request_json(rag_trace())
    attrs = obj["resourceSpans"][0]["resource"]["attributes"]
    attrs.append({"key": "host.cores", "value": {"intValue": "many"}})
    path = tmp_path / "t.jsonl"
    path.write_text(_lines(obj))
    report = ReadReport()
    (trace,) = list(read_traces([path], report=report))
    assert len(trace.steps) == 5 and trace.request.service_name == "svc"
    assert [e.field for e in report.errors] == ["resourceSpans[0].resource.attributes"]
    assert len(trace.findings_of("malformed_field")) == 5  # one per span of that resource


def test_an_unknown_span_kind_in_protobuf_is_a_finding(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    message = ExportTraceServiceRequest.FromString(request_proto(rag_trace()))
    message.resource_spans[0].scope_spans[0].spans[3].kind = 42  # type: ignore[assignment]
    path = tmp_path / "t.pb"
    path.write_bytes(message.SerializeToString())
    report = ReadReport()
    (trace,) = list(read_traces([path], report=report))
    assert len(trace.llm_calls) == 1
    where = "resource_spans[0].scope_spans[0].spans[3].kind"
    assert [(e.line, e.field) for e in report.errors] == [(1, where)]
    (finding,) = trace.findings_of("malformed_field")
    assert finding.field == where and finding.location == f"{path}:1"


def test_wrong_envelope_is_an_error_for_that_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_lines({"resourceSpans": {"oops": 1}}, [1, 2], request_json(agent_trace())))
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    assert [t.trace_id for t in traces] == [TRACE_B]
    assert [e.line for e in report.errors] == [1, 2]


def test_invalid_protobuf_message_is_reported_with_its_index(tmp_path: Path) -> None:
    good = request_proto(rag_trace())
    garbage = b"\xff\xff\xff\xff\x0f\x00garbage"
    other = request_proto(agent_trace())
    path = tmp_path / "t.pb"
    path.write_bytes(
        _VarintBytes(len(good))
        + good
        + _VarintBytes(len(garbage))
        + garbage
        + _VarintBytes(len(other))
        + other
    )
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    assert sorted(t.trace_id for t in traces) == [TRACE_A, TRACE_B]
    assert [(e.path, e.line) for e in report.errors] == [(str(path), 2)]
    assert "invalid protobuf" in report.errors[0].reason


def test_truncated_protobuf_stream_keeps_what_came_before(tmp_path: Path) -> None:
    good = request_proto(rag_trace())
    other = request_proto(agent_trace())
    path = tmp_path / "t.pb"
    path.write_bytes(_VarintBytes(len(good)) + good + _VarintBytes(len(other)) + other[:10])
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    assert [t.trace_id for t in traces] == [TRACE_A]
    assert report.errors[0].line == 2 and "framing" in report.errors[0].reason


def test_truncated_gzip_reports_and_keeps_earlier_lines(tmp_path: Path) -> None:
    text = _lines(request_json(rag_trace())) + _lines(request_json(agent_trace())) * 50
    data = gzip.compress(text.encode())
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(data[: len(data) - 40])
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    assert TRACE_A in {t.trace_id for t in traces}
    assert len(report.errors) == 1 and report.errors[0].path == str(path)


def test_errors_in_one_file_do_not_stop_the_next(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("{broken\n")
    (tmp_path / "b.jsonl").write_text(_lines(request_json(agent_trace())))
    report = ReadReport()
    traces = list(read_traces([tmp_path], report=report))
    assert [t.trace_id for t in traces] == [TRACE_B]
    assert report.errors[0].path == str(tmp_path / "a.jsonl")


def test_non_finite_double_attributes_survive_conversion_to_json(tmp_path: Path) -> None:
    obj = request_json(rag_trace())
    span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"] += [
        {"key": "x.nan", "value": {"doubleValue": "NaN"}},
        {"key": "x.inf", "value": {"doubleValue": "-Infinity"}},
        {
            "key": "x.list",
            "value": {"arrayValue": {"values": [{"doubleValue": 1.5}, {"doubleValue": "NaN"}]}},
        },
    ]
    path = tmp_path / "nan.jsonl"
    path.write_text(_lines(obj))
    (trace,) = list(read_traces([path]))
    step = next(s for s in trace.steps if s.span_id == span["spanId"])
    # spelled as OTLP/JSON spells them: τ holds JSON values and reads back as it was written
    assert step.attributes["x.inf"] == "-Infinity"
    assert step.attributes["x.list"] == [1.5, "NaN"]
    assert type(trace).from_json(trace.to_json()) == trace
    as_json = json.loads(trace.to_json())  # no ValueError: JSON has no NaN
    attrs = next(s for s in as_json["steps"] if s["span_id"] == span["spanId"])["attributes"]
    assert (attrs["x.nan"], attrs["x.inf"]) == ("NaN", "-Infinity")


@pytest.mark.parametrize("depth", [50, 300, 340, 600])
def test_deeply_nested_array_values_never_crash_the_reader(tmp_path: Path, depth: int) -> None:
    obj = request_json(rag_trace())
    span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"].append({"key": "deep", "value": "__DEEP__"})
    nested = '{"arrayValue": {"values": [' * depth + '{"stringValue": "x"}' + "]}}" * depth
    deep_line = json.dumps(obj).replace('"__DEEP__"', nested)
    path = tmp_path / "deep.jsonl"
    path.write_text(_lines(deep_line, request_json(agent_trace())))
    report = ReadReport()
    traces = {t.trace_id: t for t in read_traces([path], report=report)}
    assert TRACE_B in traces  # the next line is read whatever happened to the deep one
    if not report.errors:  # read in full, or ...
        assert len(traces[TRACE_A].steps) == len(rag_trace())
        assert traces[TRACE_A].incomplete is None
    else:  # ... reported with its line (JSON parsers cap nesting depth), the trace lost
        assert [e.line for e in report.errors] == [1]
        assert traces[TRACE_A].steps == () and traces[TRACE_A].incomplete is not None
