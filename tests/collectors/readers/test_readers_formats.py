"""Readers: every accepted input format yields the same traces."""

from __future__ import annotations

import base64
import gzip
import io
import json
import sys
from pathlib import Path

import pytest
from google.protobuf.internal.encoder import _VarintBytes

from groundtrace.collectors import ReadReport, TraceReadError, read_spans, read_traces
from groundtrace.sdk import semconv as sc
from tests.support.otlp_spans import (
    TRACE_A,
    TRACE_B,
    agent_trace,
    rag_trace,
    request_json,
    request_proto,
    write_jsonl,
)


def _summary(traces: list) -> list[tuple[str, str | None, str | None, int, int]]:
    return sorted(
        (t.trace_id, t.request.query, t.answer, len(t.steps), len(t.evidence)) for t in traces
    )


EXPECTED = [
    (TRACE_A, "Who directed Jaws?", "Steven Spielberg", 5, 2),
    (TRACE_B, "What is the return policy?", "30 days.", 4, 0),
]


def test_jsonl_file_reads_both_traces(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [rag_trace(), agent_trace()])
    assert _summary(list(read_traces([path]))) == EXPECTED


def test_trace_split_over_lines_is_reassembled(tmp_path: Path) -> None:
    spans = rag_trace()
    path = write_jsonl(tmp_path / "t.jsonl", [spans[3:], agent_trace(), spans[:3]])
    traces = list(read_traces([path]))
    assert _summary(traces) == EXPECTED
    assert all(not t.findings_of("split_trace") for t in traces)


def test_base64_ids_string_int64_and_enum_names_are_accepted(tmp_path: Path) -> None:
    obj = request_json(rag_trace())
    for span in obj["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        span["kind"] = "SPAN_KIND_SERVER"
        span["startTimeUnixNano"] = int(span["startTimeUnixNano"])
        span["status"] = {"code": "STATUS_CODE_OK"}
    path = tmp_path / "b64.json"
    path.write_text(json.dumps(obj) + "\n")
    spans = list(read_spans([path]))
    assert spans[0].trace_id == TRACE_A
    assert spans[0].kind == "SERVER"
    assert spans[0].status.code == "OK"
    assert spans[1].parent_span_id == spans[0].span_id


def test_protobuf_delimited_stream_and_bare_message(tmp_path: Path) -> None:
    one, two = request_proto(rag_trace()), request_proto(agent_trace())
    delimited = tmp_path / "t.pb"
    delimited.write_bytes(_VarintBytes(len(one)) + one + _VarintBytes(len(two)) + two)
    bare = tmp_path / "bare.binpb"
    bare.write_bytes(one)
    assert _summary(list(read_traces([delimited]))) == EXPECTED
    assert _summary(list(read_traces([bare]))) == EXPECTED[:1]


def test_protobuf_is_sniffed_without_a_suffix(tmp_path: Path) -> None:
    one = request_proto(rag_trace())
    path = tmp_path / "noext"
    path.write_bytes(_VarintBytes(len(one)) + one)
    assert _summary(list(read_traces([path]))) == EXPECTED[:1]


def test_gzip_variants_by_magic_bytes(tmp_path: Path) -> None:
    text = json.dumps(request_json(rag_trace())) + "\n"
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    one = request_proto(agent_trace())
    (tmp_path / "b.pb.gz").write_bytes(gzip.compress(_VarintBytes(len(one)) + one))
    assert _summary(list(read_traces([tmp_path]))) == EXPECTED


def test_directory_is_recursive_sorted_and_skips_unknown_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "b.jsonl", [agent_trace()])
    write_jsonl(tmp_path / "a.jsonl", [rag_trace()])
    (tmp_path / "notes.txt").write_text("not a trace file")
    (tmp_path / ".hidden.jsonl").write_text("garbage")
    report = ReadReport()
    traces = list(read_traces([tmp_path], report=report))
    assert report.files == [str(tmp_path / "a.jsonl"), str(tmp_path / "sub" / "b.jsonl")]
    assert report.ok and report.spans == 9 and report.records == 2
    assert [t.trace_id for t in traces] == [TRACE_A, TRACE_B]


def test_stdin_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (json.dumps(request_json(rag_trace())) + "\n").encode()

    class _Stdin:
        buffer = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]

    monkeypatch.setattr(sys, "stdin", _Stdin())
    traces = list(read_traces(["-"]))
    assert _summary(traces) == EXPECTED[:1]
    assert traces[0].steps[0].location == "<stdin>:1"


def test_empty_file_and_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    path = tmp_path / "blank.jsonl"
    path.write_text("\n\n" + json.dumps(request_json(rag_trace())) + "\n\n")
    assert _summary(list(read_traces([tmp_path]))) == EXPECTED[:1]


def test_missing_path_raises_with_the_path(tmp_path: Path) -> None:
    with pytest.raises(TraceReadError) as info:
        list(read_spans([tmp_path / "nope.jsonl"]))
    assert info.value.path == str(tmp_path / "nope.jsonl")


def test_span_fields_are_decoded(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [agent_trace()])
    spans = {s.span_id: s for s in read_spans([path])}
    failing = spans["000000000000000d"]
    assert failing.status.code == "ERROR"
    assert failing.attributes[sc.GT_TOOL_STATUS] == "error"
    assert failing.resource[sc.SERVICE_NAME] == "svc"
    assert str(failing.location) == f"{path}:1"
