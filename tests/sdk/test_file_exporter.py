"""The OTLP-JSON-lines file exporter writes the Collector file-exporter format."""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from groundtrace.collectors.receiver import parse_json_request, request_to_otlp_json
from groundtrace.sdk import _runtime
from groundtrace.sdk._config import configure, export_stats, shutdown
from groundtrace.sdk._otlp_json import dumps_line, encode_spans_json
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter, rotated_name

pytestmark = pytest.mark.usefixtures("clean_config")


class FixedIds(IdGenerator):
    def __init__(self) -> None:
        self._span = 0x1000

    def generate_span_id(self) -> int:
        self._span += 1
        return 0x00F067AA0BA90000 + self._span

    def generate_trace_id(self) -> int:
        return 0x4BF92F3577B34DA6A3CE929D0E0E4736


def _provider(resource: Resource | None = None) -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource or Resource.create({}), id_generator=FixedIds())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def _rich_spans() -> list[ReadableSpan]:
    provider, memory = _provider()
    tracer = provider.get_tracer("lib", "1.0", schema_url="https://example.org/s")
    with tracer.start_as_current_span(
        "root",
        kind=SpanKind.SERVER,
        attributes={"s": "é", "i": 7, "f": 0.5, "b": True, "arr": ["x", "y"], "ints": [1, 2]},
    ) as root:
        with tracer.start_as_current_span("child", links=[Link(root.get_span_context(), {"k": 1})]):
            pass
        root.add_event("note", {"n": 3})
        root.set_status(Status(StatusCode.ERROR, "boom"))
    return list(memory.get_finished_spans())


def _hex_to_b64_ids(obj: dict[str, Any]) -> dict[str, Any]:
    for rs in obj["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for items in (span, *span.get("links", ())):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in items:
                            items[key] = base64.b64encode(bytes.fromhex(items[key])).decode()
    return obj


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _span_count(lines: list[dict[str, Any]]) -> int:
    return sum(
        len(ss["spans"])
        for line in lines
        for rs in line["resourceSpans"]
        for ss in rs["scopeSpans"]
    )


def test_lines_parse_as_export_trace_service_request(tmp_path: Path) -> None:
    spans = _rich_spans()
    exporter = OTLPJsonFileExporter(tmp_path / "t.jsonl")
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    (line,) = (tmp_path / "t.jsonl").read_text("utf-8").splitlines()
    obj = json.loads(line)
    parsed = json_format.Parse(json.dumps(_hex_to_b64_ids(obj)), ExportTraceServiceRequest())
    assert parsed == encode_spans(spans)  # identical to the OTLP protobuf encoder's output


def test_encoding_details_match_otlp_json() -> None:
    spans = _rich_spans()
    obj = encode_spans_json(spans)
    span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][1]  # root ends last
    assert span["name"] == "root"
    assert span["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736"  # lowercase hex, not base64
    assert len(span["spanId"]) == 16
    assert span["kind"] == 2  # SPAN_KIND_SERVER as an integer
    assert isinstance(span["startTimeUnixNano"], str)
    assert int(span["endTimeUnixNano"]) >= int(span["startTimeUnixNano"])
    assert span["status"] == {"message": "boom", "code": 2}
    values = {a["key"]: a["value"] for a in span["attributes"]}
    assert values["i"] == {"intValue": "7"}
    assert values["f"] == {"doubleValue": 0.5}
    assert values["b"] == {"boolValue": True}
    assert values["arr"] == {"arrayValue": {"values": [{"stringValue": "x"}, {"stringValue": "y"}]}}
    assert values["ints"] == {"arrayValue": {"values": [{"intValue": "1"}, {"intValue": "2"}]}}
    assert request_to_otlp_json(encode_spans(spans)) == obj  # what the receiver writes
    assert parse_json_request(dumps_line(obj).encode()) == encode_spans(spans)


def test_golden_line_structure(tmp_path: Path) -> None:
    provider, memory = _provider(Resource({"service.name": "golden"}))
    tracer = provider.get_tracer("groundtrace", "0.1.0")
    root = tracer.start_span("REQUEST", start_time=1_700_000_000_000_000_000)
    root.set_attribute("q", "who?")
    root.end(end_time=1_700_000_000_500_000_000)
    exporter = OTLPJsonFileExporter(tmp_path / "g.jsonl")
    exporter.export(memory.get_finished_spans())
    exporter.shutdown()
    line = (tmp_path / "g.jsonl").read_text("utf-8")
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "golden"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "groundtrace", "version": "0.1.0"},
                        "spans": [
                            {
                                "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
                                "spanId": "00f067aa0ba91001",
                                "flags": 256,
                                "name": "REQUEST",
                                "kind": 1,
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000500000000",
                                "attributes": [{"key": "q", "value": {"stringValue": "who?"}}],
                                "status": {},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    # compact, one object per line, keys in OTLP field order
    assert line.startswith('{"resourceSpans":[{"resource":{"attributes":[')
    assert '"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba91001"' in line


def test_directory_path_gets_per_process_file(tmp_path: Path) -> None:
    exporter = OTLPJsonFileExporter(tmp_path)
    assert exporter.path == tmp_path / f"traces-{os.getpid()}.jsonl"
    new_dir = OTLPJsonFileExporter(str(tmp_path / "new") + "/")
    assert new_dir.path == tmp_path / "new" / f"traces-{os.getpid()}.jsonl"
    new_dir.export(_rich_spans())
    new_dir.shutdown()
    assert _span_count(_read_lines(new_dir.path)) == 2


def test_rotation_by_size(tmp_path: Path) -> None:
    spans = _rich_spans()
    one_line = len(json.dumps(encode_spans_json(spans[:1]), separators=(",", ":"))) + 1
    path = tmp_path / "traces.jsonl"
    exporter = OTLPJsonFileExporter(path, max_bytes=int(one_line * 2.5), backup_count=2)
    for _ in range(9):
        assert exporter.export(spans[:1]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert rotated_name(path, 1) == tmp_path / "traces.1.jsonl"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["traces.1.jsonl", "traces.2.jsonl", "traces.jsonl"]
    for p in tmp_path.iterdir():
        assert p.stat().st_size <= one_line * 2.5
        assert _span_count(_read_lines(p)) == len(p.read_text("utf-8").splitlines())
    # 9 lines written, 2 per full file: newest 1 in traces.jsonl, 2 + 2 in the backups
    assert [len(_read_lines(tmp_path / n)) for n in names] == [2, 2, 1]


def test_rotation_without_backups_truncates(tmp_path: Path) -> None:
    spans = _rich_spans()
    path = tmp_path / "t.jsonl"
    exporter = OTLPJsonFileExporter(path, max_bytes=10, backup_count=0)
    for _ in range(3):
        exporter.export(spans)
    exporter.shutdown()
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]
    assert len(_read_lines(path)) == 1  # a line longer than max_bytes is still written whole


def test_fsync_on_shutdown_and_force_flush(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def record(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", record)
    exporter = OTLPJsonFileExporter(tmp_path / "t.jsonl")
    exporter.export(_rich_spans())
    assert exporter.force_flush()
    assert len(synced) == 1
    exporter.export(_rich_spans())
    exporter.shutdown()
    assert len(synced) == 2
    assert _span_count(_read_lines(tmp_path / "t.jsonl")) == 4
    assert exporter.export(_rich_spans()) is SpanExportResult.FAILURE  # closed


def test_configure_file_exporter_content_complete_after_shutdown(tmp_path: Path) -> None:
    configure(exporter="file", file_path=tmp_path, service_name="svc")
    tracer = _runtime.get_tracer()
    for i in range(25):
        with tracer.start_as_current_span(f"s{i}"):
            pass
    shutdown()  # no waiting for the 5 s schedule delay: shutdown drains and fsyncs
    (path,) = tmp_path.iterdir()
    lines = _read_lines(path)
    assert _span_count(lines) == 25
    assert export_stats().exported == 25
    resource = lines[0]["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "service.name", "value": {"stringValue": "svc"}} in resource


def test_concurrent_exports_write_whole_lines(tmp_path: Path) -> None:
    spans = _rich_spans()
    exporter = OTLPJsonFileExporter(tmp_path / "t.jsonl", max_bytes=20_000, backup_count=50)
    threads = [
        threading.Thread(target=lambda: [exporter.export(spans) for _ in range(25)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    exporter.shutdown()
    lines = [line for p in tmp_path.iterdir() for line in _read_lines(p)]
    assert len(lines) == 100
    assert _span_count(lines) == 200


def test_unwritable_path_fails_without_raising(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    exporter = OTLPJsonFileExporter(blocker / "sub" / "t.jsonl")
    assert exporter.export(_rich_spans()) is SpanExportResult.FAILURE
    exporter.shutdown()


def test_a_lone_surrogate_does_not_lose_the_batch(tmp_path: Path) -> None:
    name = os.fsdecode(b"report-\xff.pdf")  # "report-\udcff.pdf", as os.listdir() returns it
    configure(exporter="file", file_path=tmp_path, service_name="svc")
    tracer = _runtime.get_tracer()
    for i in range(40):
        with tracer.start_as_current_span(f"s{i}") as span:
            span.set_attribute("path", f"ok-{i}.pdf")
    with tracer.start_as_current_span(f"open {name}") as span:
        span.set_attribute("path", name)
        span.set_attribute("paths", [name, "ok.pdf"])
        span.add_event("read", {"path": name})
        span.set_status(Status(StatusCode.ERROR, f"cannot read {name}"))
    shutdown()
    (path,) = tmp_path.iterdir()
    lines = _read_lines(path)
    assert _span_count(lines) == 41
    assert export_stats().exported == 41
    spans = [
        s
        for line in lines
        for rs in line["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    (bad,) = [s for s in spans if s["name"].startswith("open ")]
    assert bad["name"] == "open report-\ufffd.pdf"
    assert {"key": "path", "value": {"stringValue": "report-\ufffd.pdf"}} in bad["attributes"]
    assert bad["events"][0]["attributes"][0]["value"] == {"stringValue": "report-\ufffd.pdf"}
    assert bad["status"]["message"] == "cannot read report-\ufffd.pdf"


def test_a_run_after_a_torn_line_starts_on_a_fresh_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    earlier = (dumps_line(encode_spans_json(_rich_spans())) + "\n").encode()
    torn = earlier[: len(earlier) // 2]  # the previous run was killed mid-write
    path.write_bytes(earlier + torn)
    exporter = OTLPJsonFileExporter(path)
    spans = _rich_spans() * 5
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    first, second, third = path.read_bytes().split(b"\n")[:3]
    assert first + b"\n" == earlier and second == torn  # left as it was, on its own line
    assert _span_count([json.loads(third)]) == 10  # the new batch is a readable line
    assert path.read_bytes().endswith(b"\n") and path.read_bytes().count(b"\n") == 3


def test_a_file_ending_with_a_newline_gets_no_blank_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    for _ in range(2):  # two runs, each on a whole file
        exporter = OTLPJsonFileExporter(path)
        exporter.export(_rich_spans())
        exporter.shutdown()
    assert b"\n\n" not in path.read_bytes()
    assert len(_read_lines(path)) == 2
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    exporter = OTLPJsonFileExporter(empty)
    exporter.export(_rich_spans())
    exporter.shutdown()
    assert not empty.read_bytes().startswith(b"\n")
