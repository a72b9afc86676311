"""``groundtrace traces send``: stored traces re-exported over OTLP, against the embedded
receiver (in-process) and small loopback servers that refuse or are gone."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc  # type: ignore[import-untyped]
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.collectors.readers import ReadReport, read_exports
from groundtrace.collectors.receiver import Receiver, request_to_json_line
from groundtrace.sdk import semconv as sc
from tests.support.otlp_spans import agent_trace, rag_trace, write_jsonl

pytestmark = pytest.mark.timeout(120)

app = build_app()
TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")
OTHER = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def full_request() -> ExportTraceServiceRequest:
    """Spans with every field the readers' span records do not keep (links, flags, trace
    state, dropped counts, schema URLs, scope attributes) beside the usual ones."""
    root = Span(
        trace_id=TRACE,
        span_id=bytes.fromhex("00f067aa0ba902b7"),
        trace_state="vendor=abc",
        flags=0x301,
        name="request",
        kind=Span.SPAN_KIND_SERVER,
        start_time_unix_nano=1_700_000_000_000_000_000,
        end_time_unix_nano=1_700_000_001_000_000_000,
        attributes=[_kv(sc.GT_ACTION, "REQUEST")],
        dropped_attributes_count=3,
        events=[Span.Event(time_unix_nano=1_700_000_000_500_000_000, name="ev", attributes=[])],
        dropped_events_count=2,
        links=[
            Span.Link(
                trace_id=OTHER,
                span_id=bytes.fromhex("1111111111111111"),
                trace_state="k=v",
                attributes=[_kv("why", "retry")],
                flags=0x100,
            )
        ],
        dropped_links_count=1,
        status=Status(code=Status.STATUS_CODE_ERROR, message="boom"),
    )
    child = Span(
        trace_id=TRACE,
        span_id=bytes.fromhex("a3ce929d0e0e4736"),
        parent_span_id=root.span_id,
        name="retrieve",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=1_700_000_000_100_000_000,
        end_time_unix_nano=1_700_000_000_200_000_000,
        # (an unset status is written as "status": {} by the OTLP/JSON writer, which reads
        # back as an empty message: present, so given here)
        status=Status(code=Status.STATUS_CODE_OK),
    )
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(
                    attributes=[_kv(sc.SERVICE_NAME, "shop"), _kv("host.name", "h1")],
                    dropped_attributes_count=4,
                ),
                schema_url="https://opentelemetry.io/schemas/1.26.0",
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(
                            name="app", version="1.2", attributes=[_kv("s", "t")]
                        ),
                        schema_url="https://opentelemetry.io/schemas/1.26.0",
                        spans=[root, child],
                    )
                ],
            )
        ]
    )


def spans_of(requests: list[ExportTraceServiceRequest]) -> dict[bytes, tuple[bytes, ...]]:
    """Every span (by span id) with its resource, scope and schema URLs, serialised."""
    out: dict[bytes, tuple[bytes, ...]] = {}
    for request in requests:
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    out[span.span_id] = (
                        rs.resource.SerializeToString(deterministic=True),
                        rs.schema_url.encode(),
                        ss.scope.SerializeToString(deterministic=True),
                        ss.schema_url.encode(),
                        span.SerializeToString(deterministic=True),
                    )
    return out


def stored(folder: Path) -> list[ExportTraceServiceRequest]:
    report = ReadReport()
    requests = list(read_exports([folder], report=report))
    assert report.errors == []
    return requests


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "full.jsonl").write_bytes(request_to_json_line(full_request()))
    write_jsonl(folder / "rag.jsonl", [rag_trace(), agent_trace()])
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["traces", "send", *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_field_and_id_arrives_as_stored(inputs: Path, tmp_path: Path) -> None:
    with Receiver("127.0.0.1", 0, tmp_path / "rx") as rx:
        code, out, err = run(str(inputs), "--endpoint", rx.endpoint, "--json")
    assert code == 0, out + err
    summary = json.loads(out)
    assert summary["spans_read"] == summary["spans_sent"] == 11
    assert summary["spans_failed"] == summary["spans_not_tried"] == 0
    assert spans_of(stored(tmp_path / "rx")) == spans_of(stored(inputs))
    # against the message built here, not only against what the readers make of the file
    expected = spans_of([full_request()])
    assert {k: v for k, v in spans_of(stored(tmp_path / "rx")).items() if k in expected} == (
        expected
    )


def test_the_receivers_folder_is_sent_again_in_batches(inputs: Path, tmp_path: Path) -> None:
    with Receiver("127.0.0.1", 0, tmp_path / "rx") as rx:
        assert run(str(inputs), "--endpoint", rx.endpoint)[0] == 0
    with Receiver("127.0.0.1", 0, tmp_path / "rx2") as rx:
        base = rx.endpoint.removesuffix("/v1/traces")
        code, out, err = run(str(tmp_path / "rx"), "--endpoint", base, "--batch-spans", "4")
    assert code == 0, out + err
    assert "sent 11 of 11 span(s)" in out and "in 3 request(s)" in out
    again = stored(tmp_path / "rx2")
    assert [sum(len(ss.spans) for rs in r.resource_spans for ss in rs.scope_spans) for r in again]
    assert len(again) == 3
    assert spans_of(again) == spans_of(stored(inputs))


def test_service_and_project_are_set_on_the_resource_only(inputs: Path, tmp_path: Path) -> None:
    with Receiver("127.0.0.1", 0, tmp_path / "rx") as rx:
        code, out, err = run(
            str(inputs), "--endpoint", rx.endpoint, "--service", "shop-prod", "--project", "p1"
        )
    assert code == 0, out + err
    before, after = spans_of(stored(inputs)), spans_of(stored(tmp_path / "rx"))
    assert before.keys() == after.keys()
    for span_id, (resource_bytes, *rest) in after.items():
        assert rest == list(before[span_id][1:])  # span, scope and schema URLs unchanged
        resource = Resource.FromString(resource_bytes)
        old = Resource.FromString(before[span_id][0])
        attributes = {kv.key: kv.value.string_value for kv in resource.attributes}
        assert attributes[sc.SERVICE_NAME] == "shop-prod"
        assert attributes[sc.OI_PROJECT_NAME] == "p1"
        others = {kv.key: kv.value.string_value for kv in old.attributes}
        others.pop(sc.SERVICE_NAME)
        assert {k: v for k, v in attributes.items() if k in others} == others
        assert resource.dropped_attributes_count == old.dropped_attributes_count


class _Flaky(BaseHTTPRequestHandler):
    """Answers the first requests with the statuses in ``server.answers``, then 200."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server = self.server
        server.bodies.append(body)  # type: ignore[attr-defined]
        server.headers.append(dict(self.headers))  # type: ignore[attr-defined]
        answers: list[tuple[int, dict[str, str]]] = server.answers  # type: ignore[attr-defined]
        status, headers = answers.pop(0) if answers else (200, {})
        response = ExportTraceServiceResponse()
        if "X-Reject" in headers:  # a partial success rejecting that many spans
            response.partial_success.rejected_spans = int(headers.pop("X-Reject"))
            response.partial_success.error_message = "span too old"
        payload = response.SerializeToString() if status == 200 else b"busy"
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    server.bodies = []  # type: ignore[attr-defined]
    server.headers = []  # type: ignore[attr-defined]
    server.answers = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_429_and_503_are_retried_with_the_same_request(
    inputs: Path, flaky: ThreadingHTTPServer
) -> None:
    flaky.answers.extend([(429, {"Retry-After": "0"}), (503, {})])  # type: ignore[attr-defined]
    code, out, err = run(
        str(inputs / "full.jsonl"), "--endpoint", _url(flaky), "--header", "X-Key=s3cret", "--json"
    )
    assert code == 0, out + err
    summary = json.loads(out)
    assert summary["retries"] == 2 and summary["spans_sent"] == 2
    bodies: list[bytes] = flaky.bodies  # type: ignore[attr-defined]
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2]
    assert spans_of([ExportTraceServiceRequest.FromString(bodies[2])]) == spans_of([full_request()])
    assert all(h["X-Key"] == "s3cret" for h in flaky.headers)  # type: ignore[attr-defined]
    assert all(h["Content-Type"] == "application/x-protobuf" for h in flaky.headers)  # type: ignore[attr-defined]


def test_retries_are_bounded_and_a_refusal_exits_non_zero(
    inputs: Path, flaky: ThreadingHTTPServer
) -> None:
    flaky.answers.extend([(429, {"Retry-After": "0"})] * 3)  # type: ignore[attr-defined]
    code, _, err = run(str(inputs / "full.jsonl"), "--endpoint", _url(flaky), "--retries", "2")
    assert code == 4
    assert "nothing could be sent" in err and "answered 429" in err and "after 2 retries" in err
    assert len(flaky.bodies) == 3  # type: ignore[attr-defined]


def test_a_refused_request_fails_alone(inputs: Path, flaky: ThreadingHTTPServer) -> None:
    flaky.answers.append((400, {}))  # type: ignore[attr-defined]
    code, out, err = run(str(inputs), "--endpoint", _url(flaky), "--batch-spans", "5", "--json")
    assert code == 4
    summary = json.loads(out)
    assert summary["spans_failed"] == 5 and summary["spans_sent"] == 6
    assert "5 span(s) not sent" in err and "answered 400" in err


def test_a_dead_endpoint_exits_non_zero_with_the_reason(inputs: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = run(
        str(inputs), "--endpoint", f"http://127.0.0.1:{port}", "--retries", "1", "--json"
    )
    assert code == 4
    summary = json.loads(out)
    assert summary["spans_sent"] == 0 and summary["spans_not_tried"] == 11
    assert summary["requests"] == 1  # the rest is not tried against a dead endpoint
    assert "nothing could be sent" in err and f"127.0.0.1:{port}" in err
    assert "after 1 retries" in err


def test_bad_lines_are_named_and_skipped(tmp_path: Path) -> None:
    good = request_to_json_line(full_request())
    line = good.rstrip(b"\n")
    path = tmp_path / "damaged.jsonl"
    # line 1: not JSON; line 2: a torn export glued to a whole one; line 3: a bad id;
    # line 4: JSON, not an export; line 5: binary
    bad_id = line.replace(b"5b8efff798038103d269b633813fc60c", b"zz", 1)
    path.write_bytes(
        b"{not json\n" + line[:40] + line + b"\n" + bad_id + b'\n{"spans": []}\n\x00\x01\n'
    )
    with Receiver("127.0.0.1", 0, tmp_path / "rx") as rx:
        code, out, err = run(str(path), "--endpoint", rx.endpoint, "--json")
    assert code == 0, out + err
    summary = json.loads(out)
    assert summary["spans_sent"] == 2
    assert [(e["path"], e["line"]) for e in summary["read_errors"]] == [
        (str(path), 1),
        (str(path), 2),
        (str(path), 3),
        (str(path), 4),
        (str(path), 5),
    ]
    assert "not an OTLP export" in summary["read_errors"][3]["message"]
    assert "5 unreadable trace line(s) skipped" in err and f"{path}:1" in err
    assert spans_of(stored(tmp_path / "rx")) == spans_of([full_request()])


def test_protobuf_gzip_and_logs(tmp_path: Path) -> None:
    request = full_request()
    (tmp_path / "a.pb.gz").write_bytes(gzip.compress(request.SerializeToString()))
    (tmp_path / "logs.jsonl").write_text(
        json.dumps(
            {
                "resourceLogs": [
                    {"scopeLogs": [{"logRecords": [{"traceId": TRACE.hex(), "body": {}}]}]}
                ]
            }
        )
        + "\n"
    )
    with Receiver("127.0.0.1", 0, tmp_path / "rx") as rx:
        code, out, err = run(str(tmp_path), "--endpoint", rx.endpoint)
    assert code == 0, out + err
    assert "sent 2 of 2 span(s)" in out and "1 log record(s) not sent" in out
    assert spans_of(stored(tmp_path / "rx")) == spans_of([request])


def test_nothing_readable_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("garbage\n")
    code, _, err = run(str(path), "--endpoint", "http://127.0.0.1:9")
    assert code == 2
    assert "no span could be read" in err and f"{path}:1" in err
    # a protobuf message that is no export (an unknown field only) is named too
    (tmp_path / "bad.jsonl").unlink()
    (tmp_path / "other.pb").write_bytes(b"\x02\x50\x01")  # one framed message
    code, _, err = run(str(tmp_path), "--endpoint", "http://127.0.0.1:9")
    assert code == 2 and "message 1: not an OTLP trace or logs export" in err


def test_bad_options_are_refused(inputs: Path) -> None:
    code, _, err = run(str(inputs), "--endpoint", "http://x", "--protocol", "thrift")
    assert code == 2 and "--protocol" in err
    code, _, err = run(str(inputs), "--endpoint", "http://x", "--header", "novalue")
    assert code == 2 and "KEY=VALUE" in err


class _Collector:
    """A gRPC trace service: aborts the first calls with the codes in ``answers``, then takes
    the request."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.metadata: list[dict[str, str]] = []
        self.answers: list[grpc.StatusCode] = []

    def Export(
        self, request: ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> ExportTraceServiceResponse:
        self.requests.append(request)
        self.metadata.append(dict(context.invocation_metadata()))
        if self.answers:
            context.abort(self.answers.pop(0), "busy")
        return ExportTraceServiceResponse()


@pytest.fixture
def collector() -> Iterator[tuple[_Collector, int]]:
    from concurrent.futures import ThreadPoolExecutor

    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    service = _Collector()
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(service, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield service, port
    server.stop(None)


def test_grpc_retries_unavailable_and_keeps_ids(
    inputs: Path, collector: tuple[_Collector, int]
) -> None:
    service, port = collector
    service.answers.append(grpc.StatusCode.UNAVAILABLE)
    code, out, err = run(
        str(inputs / "full.jsonl"),
        "--endpoint",
        f"http://127.0.0.1:{port}",
        "--protocol",
        "grpc",
        "--header",
        "X-Key=s3cret",
        "--project",
        "p1",
        "--json",
    )
    assert code == 0, out + err
    assert json.loads(out)["retries"] == 1
    assert len(service.requests) == 2 and service.requests[0] == service.requests[1]
    assert service.metadata[1]["x-key"] == "s3cret"
    got = spans_of(service.requests[1:])
    expected = spans_of([full_request()])
    assert {k: v[1:] for k, v in got.items()} == {k: v[1:] for k, v in expected.items()}
    resource = service.requests[1].resource_spans[0].resource
    assert _kv(sc.OI_PROJECT_NAME, "p1") in resource.attributes


def test_grpc_refusal_is_not_retried(inputs: Path, collector: tuple[_Collector, int]) -> None:
    service, port = collector
    service.answers.append(grpc.StatusCode.INVALID_ARGUMENT)
    endpoint = f"127.0.0.1:{port}"
    code, _, err = run(str(inputs / "full.jsonl"), "--endpoint", endpoint, "--protocol", "grpc")
    assert code == 4 and "INVALID_ARGUMENT" in err and len(service.requests) == 1


def test_retry_after_is_honoured_else_the_backoff_doubles(flaky: ThreadingHTTPServer) -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from groundtrace.analyzer._send import send_exports

    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    flaky.answers.extend(  # type: ignore[attr-defined]
        [(429, {"Retry-After": "7"}), (503, {}), (503, {"Retry-After": later}), (502, {})]
    )
    delays: list[float] = []
    sent = send_exports([full_request()], _url(flaky), sleep=delays.append)
    assert (sent.spans_sent, sent.retries, sent.failures) == (2, 4, [])
    assert delays[:2] == [7.0, 1.0] and 25 < delays[2] <= 30 and delays[3] == 4.0


def test_spans_rejected_by_a_partial_success_are_failed(
    inputs: Path, flaky: ThreadingHTTPServer
) -> None:
    flaky.answers.append((200, {"X-Reject": "1"}))  # type: ignore[attr-defined]
    code, out, err = run(str(inputs / "full.jsonl"), "--endpoint", _url(flaky), "--json")
    assert code == 4
    summary = json.loads(out)
    assert (summary["spans_sent"], summary["spans_failed"], summary["retries"]) == (1, 1, 0)
    assert "1 span(s) not sent: 1 span(s) rejected: span too old" in err
