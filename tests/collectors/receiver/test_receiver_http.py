"""The embedded OTLP/HTTP receiver, in process: encodings, errors, auth, bounds, files."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors.receiver import (
    BatchStore,
    Receiver,
    ReceiverLimits,
    repair_torn_tail,
    request_to_otlp_json,
)
from groundtrace.sdk import semconv as sc

PROTO = "application/x-protobuf"
JSON = "application/json"


# -- helpers ----------------------------------------------------------------------------------


def make_spans(n_traces: int, tag: str = "t") -> list[ReadableSpan]:
    """Real SDK spans: per trace a root with a RETRIEVE child carrying typed attributes."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test-receiver", "1.0")
    for i in range(n_traces):
        with tracer.start_as_current_span(f"{tag}-request-{i}") as root:
            root.set_attribute(sc.GT_ACTION, sc.Action.REQUEST.value)
            root.set_attribute(sc.GT_REQUEST_QUERY, f"question {i}?")
            with tracer.start_as_current_span("retrieve") as child:
                child.set_attribute(sc.GT_ACTION, sc.Action.RETRIEVE.value)
                child.set_attribute(sc.GT_RETRIEVAL_K, 5)
                child.set_attribute(sc.GT_SELECTED_IDS, ["d1", "d2"])
                child.set_attribute(sc.OI_DOCUMENT_SCORE, 0.25)
                child.add_event("note", {"ok": True})
    provider.shutdown()
    return list(memory.get_finished_spans())


def proto_body(spans: list[ReadableSpan]) -> bytes:
    return encode_spans(spans).SerializeToString()


def json_body(spans: list[ReadableSpan]) -> bytes:
    return json.dumps(request_to_otlp_json(encode_spans(spans))).encode()


def stored_lines(out_dir: Path) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for path in sorted(out_dir.glob("*.jsonl")):
        text = path.read_text(encoding="utf-8")
        assert text == "" or text.endswith("\n"), f"{path} ends inside a line"
        lines.extend(json.loads(line) for line in text.splitlines())
    return lines


def stored_spans(out_dir: Path) -> list[dict[str, object]]:
    return [
        span
        for line in stored_lines(out_dir)
        for rs in line["resourceSpans"]  # type: ignore[attr-defined]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]


def attr_map(span: dict[str, object]) -> dict[str, object]:
    return {kv["key"]: kv["value"] for kv in span.get("attributes", [])}  # type: ignore[attr-defined]


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    with Receiver("127.0.0.1", 0, tmp_path / "out") as rx:
        yield rx


# -- the happy paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_otel_exporter_works_against_it_unchanged(
    receiver: Receiver, compression: Compression
) -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    exporter = OTLPSpanExporter(endpoint=receiver.endpoint, compression=compression)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("root") as root:
        root.set_attribute(sc.GT_REQUEST_QUERY, "who?")
        with tracer.start_as_current_span("child") as child:
            child.set_attribute(sc.GT_EVIDENCE_COUNT, 3)
            child.set_attribute(sc.GT_ANSWER_CONFIDENCE, 0.5)
    provider.shutdown()

    expected = {f"{s.context.span_id:016x}": s for s in memory.get_finished_spans()}
    spans = stored_spans(receiver.out_dir)
    assert {s["spanId"] for s in spans} == set(expected)
    by_id = {s["spanId"]: s for s in spans}
    child = by_id[next(k for k, s in expected.items() if s.name == "child")]
    root_id = next(k for k, s in expected.items() if s.name == "root")
    assert child["parentSpanId"] == root_id
    assert child["traceId"] == f"{expected[root_id].context.trace_id:032x}"
    # OTLP/JSON encoding: int64 as strings, doubles as numbers, integer enums
    assert attr_map(child)[sc.GT_EVIDENCE_COUNT] == {"intValue": "3"}
    assert attr_map(child)[sc.GT_ANSWER_CONFIDENCE] == {"doubleValue": 0.5}
    assert child["kind"] == 1
    assert child["startTimeUnixNano"] == str(expected[child["spanId"]].start_time)
    assert receiver.stats.spans == 2 and receiver.stats.by_status == {200: 2}


def test_json_and_gzip_bodies_are_answered_in_the_request_encoding(receiver: Receiver) -> None:
    spans = make_spans(2)
    with httpx.Client() as client:
        r1 = client.post(
            receiver.endpoint, content=json_body(spans[:2]), headers={"content-type": JSON}
        )
        r2 = client.post(
            receiver.endpoint,
            content=gzip.compress(proto_body(spans[2:])),
            headers={"content-type": PROTO, "content-encoding": "gzip"},
        )
    assert (r1.status_code, r1.headers["content-type"], r1.json()) == (200, JSON, {})
    assert (r2.status_code, r2.headers["content-type"], r2.content) == (200, PROTO, b"")
    assert ExportTraceServiceRequest.FromString(r2.content) is not None
    lines = stored_lines(receiver.out_dir)
    assert len(lines) == 2  # one line per accepted batch
    # the JSON body and the protobuf body end up in one canonical encoding
    assert lines[0] == request_to_otlp_json(encode_spans(spans[:2]))
    assert lines[1] == request_to_otlp_json(encode_spans(spans[2:]))


def test_snake_case_json_is_accepted_and_stored_canonically(receiver: Receiver) -> None:
    spans = make_spans(1)
    canonical = request_to_otlp_json(encode_spans(spans))
    text = json.dumps(canonical)
    for camel, snake in [
        ("resourceSpans", "resource_spans"),
        ("scopeSpans", "scope_spans"),
        ("traceId", "trace_id"),
        ("spanId", "span_id"),
        ("parentSpanId", "parent_span_id"),
        ("startTimeUnixNano", "start_time_unix_nano"),
    ]:
        text = text.replace(f'"{camel}"', f'"{snake}"')
    response = httpx.post(receiver.endpoint, content=text, headers={"content-type": JSON})
    assert response.status_code == 200
    assert stored_lines(receiver.out_dir) == [canonical]


# -- refusals -----------------------------------------------------------------------------------

GOOD_IDS = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331"}


def _json_request(span: dict[str, object]) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


@pytest.mark.parametrize(
    ("media", "body", "fragment"),
    [
        (PROTO, b"\xff\xff\xff\xff not protobuf", "invalid protobuf"),
        (JSON, b"{not json", "invalid JSON"),
        (JSON, b"[1, 2]", "must be a JSON object"),
        (JSON, _json_request({**GOOD_IDS, "traceId": "zz"}), "not hex-encoded"),
        (JSON, _json_request({**GOOD_IDS, "spanId": "abcd"}), "spanId must be 8 bytes"),
        (JSON, _json_request({**GOOD_IDS, "startTimeUnixNano": "soon"}), "invalid OTLP/JSON"),
        (JSON, _json_request({**GOOD_IDS, "name": {"not": "a string"}}), "invalid OTLP/JSON"),
    ],
)
def test_undecodable_bodies_get_400_with_a_status_message(
    receiver: Receiver, media: str, body: bytes, fragment: str
) -> None:
    response = httpx.post(receiver.endpoint, content=body, headers={"content-type": media})
    assert response.status_code == 400
    if media == PROTO:
        message = status_pb2.Status.FromString(response.content).message
    else:
        message = response.json()["message"]
    assert fragment in message
    assert stored_lines(receiver.out_dir) == []


def test_corrupt_gzip_gets_400(receiver: Receiver) -> None:
    body = gzip.compress(proto_body(make_spans(1)))[:-9]  # truncated stream
    response = httpx.post(
        receiver.endpoint, content=body, headers={"content-type": PROTO, "content-encoding": "gzip"}
    )
    assert response.status_code == 400
    assert "gzip" in status_pb2.Status.FromString(response.content).message


def test_media_types_encodings_paths_and_methods(receiver: Receiver) -> None:
    body = proto_body(make_spans(1))
    base = receiver.endpoint.removesuffix("/v1/traces")
    with httpx.Client() as client:
        assert (
            client.post(
                receiver.endpoint, content=body, headers={"content-type": "text/plain"}
            ).status_code
            == 415
        )
        assert (
            client.post(
                receiver.endpoint,
                content=body,
                headers={"content-type": PROTO, "content-encoding": "br"},
            ).status_code
            == 415
        )
        assert (
            client.post(
                base + "/v1/metrics", content=body, headers={"content-type": PROTO}
            ).status_code
            == 404
        )
        assert client.get(base + "/").status_code == 404
        get = client.get(receiver.endpoint)
        assert (get.status_code, get.headers["allow"]) == (405, "POST")
        # the connection is still usable after the refusals (keep-alive)
        assert (
            client.post(
                receiver.endpoint, content=body, headers={"content-type": PROTO}
            ).status_code
            == 200
        )
    assert len(stored_lines(receiver.out_dir)) == 1


def test_oversize_bodies_get_413_compressed_or_not(tmp_path: Path) -> None:
    limits = ReceiverLimits(max_body_bytes=2048)
    body = proto_body(make_spans(8))
    assert len(body) > 2048
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
        too_big = httpx.post(rx.endpoint, content=body, headers={"content-type": PROTO})
        bomb = gzip.compress(b"\x00" * 100_000)  # small on the wire, large once inflated
        assert len(bomb) < 2048
        inflated = httpx.post(
            rx.endpoint, content=bomb, headers={"content-type": PROTO, "content-encoding": "gzip"}
        )
        small = httpx.post(
            rx.endpoint, content=proto_body(make_spans(1)), headers={"content-type": PROTO}
        )
    assert too_big.status_code == 413
    assert inflated.status_code == 413
    assert small.status_code == 200
    assert len(stored_lines(tmp_path)) == 1


def test_bearer_token_is_required_when_configured(tmp_path: Path) -> None:
    body = proto_body(make_spans(1))
    with Receiver("127.0.0.1", 0, tmp_path, token="s3cret") as rx:
        missing = httpx.post(rx.endpoint, content=body, headers={"content-type": PROTO})
        wrong = httpx.post(
            rx.endpoint,
            content=body,
            headers={"content-type": PROTO, "authorization": "Bearer nope"},
        )
        right = httpx.post(
            rx.endpoint,
            content=body,
            headers={"content-type": PROTO, "authorization": "Bearer s3cret"},
        )
        exporter = OTLPSpanExporter(
            endpoint=rx.endpoint, headers={"authorization": "Bearer s3cret"}
        )
        exported = exporter.export(make_spans(1, tag="x"))
        exporter.shutdown()
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert exported.name == "SUCCESS"
    assert len(stored_lines(tmp_path)) == 2


# -- back-pressure ------------------------------------------------------------------------------


def _raw_headers(port: int, length: int) -> bytes:
    return (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: {PROTO}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before a response"
        data += chunk
    return data


def test_beyond_the_inflight_bound_requests_get_429_with_retry_after(tmp_path: Path) -> None:
    body = proto_body(make_spans(1))
    limits = ReceiverLimits(max_inflight_requests=1, retry_after_seconds=7)
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx, httpx.Client() as client:
        # Hold the only slot: headers and half the body, the rest withheld.
        held = socket.create_connection(("127.0.0.1", rx.port), timeout=30)
        held.sendall(_raw_headers(rx.port, len(body)) + body[:10])
        statuses = []
        for _ in range(200):  # bounded: until the held request has been admitted
            response = client.post(rx.endpoint, content=body, headers={"content-type": PROTO})
            statuses.append(response.status_code)
            if response.status_code == 429:
                break
        assert statuses[-1] == 429, statuses
        assert response.headers["retry-after"] == "7"
        assert status_pb2.Status.FromString(response.content).message.startswith("receiver busy")
        held.sendall(body[10:])
        assert _read_response(held).startswith(b"HTTP/1.1 200")
        held.close()
        # the slot is free again
        assert (
            client.post(rx.endpoint, content=body, headers={"content-type": PROTO}).status_code
            == 200
        )
    assert len(stored_lines(tmp_path)) == statuses.count(200) + 2


def test_a_bounded_flood_never_loses_an_acknowledged_batch(tmp_path: Path) -> None:
    clients, batches = 8, 15
    limits = ReceiverLimits(max_inflight_requests=1)
    bodies = {
        (c, b): encode_spans(make_spans(3, tag=f"c{c}b{b}"))
        for c in range(clients)
        for b in range(batches)
    }
    outcome: dict[tuple[int, int], int] = {}
    barrier = threading.Barrier(clients)

    def run(c: int, endpoint: str) -> None:
        with httpx.Client() as client:
            barrier.wait()
            for b in range(batches):
                response = client.post(
                    endpoint,
                    content=bodies[c, b].SerializeToString(),
                    headers={"content-type": PROTO},
                )
                outcome[c, b] = response.status_code

    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx:
        threads = [threading.Thread(target=run, args=(c, rx.endpoint)) for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert set(outcome.values()) <= {200, 429}
    assert list(outcome.values()).count(429) > 0, "the bound was never reached"
    stored = {s["spanId"] for s in stored_spans(tmp_path)}
    for key, status in outcome.items():
        ids = {
            s.span_id.hex()
            for rs in bodies[key].resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        }
        if status == 200:
            assert ids <= stored, f"acknowledged batch {key} is missing"
        else:
            assert not ids & stored, f"refused batch {key} was written"


# -- files --------------------------------------------------------------------------------------


def test_files_rotate_by_size_and_lines_stay_whole(tmp_path: Path) -> None:
    limits = ReceiverLimits(rotate_bytes=4096)
    with Receiver("127.0.0.1", 0, tmp_path, limits=limits) as rx, httpx.Client() as client:
        for i in range(20):
            body = proto_body(make_spans(2, tag=f"r{i}"))
            assert (
                client.post(rx.endpoint, content=body, headers={"content-type": PROTO}).status_code
                == 200
            )
    files = sorted(tmp_path.glob("traces-*.jsonl"))
    assert len(files) > 2
    assert len(stored_lines(tmp_path)) == 20  # every file ends on a newline; 20 whole lines
    assert rx.store_stats.files == len(files)


def test_a_torn_tail_is_cut_when_the_directory_is_reopened(tmp_path: Path) -> None:
    good = b'{"resourceSpans":[]}\n'
    path = tmp_path / "traces-20260101T000000Z-1-000001.jsonl"
    path.write_bytes(good + b'{"resourceSp')
    assert repair_torn_tail(path) == len(b'{"resourceSp')
    assert path.read_bytes() == good
    path.write_bytes(good + b"partial")
    store = BatchStore(tmp_path)
    store.start()
    store.submit(b'{"x":1}\n').result(timeout=30)
    store.close()
    assert path.read_bytes() == good
    assert store.stats.torn_bytes_repaired == len(b"partial")
    assert store.stats.fsyncs == 1


def test_starting_on_a_busy_port_is_a_clear_error(receiver: Receiver, tmp_path: Path) -> None:
    from groundtrace.collectors.errors import InputError

    with pytest.raises(InputError, match="cannot start the receiver"):
        Receiver("127.0.0.1", receiver.port, tmp_path / "other").start()


def test_expect_100_continue_is_honoured_and_refusals_skip_the_body(tmp_path: Path) -> None:
    body = proto_body(make_spans(1))
    with Receiver("127.0.0.1", 0, tmp_path, token="t") as rx:
        head = (
            f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: {PROTO}\r\n"
            f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n"
        )
        # authorised: the receiver says 100 Continue before the client sends the body
        with socket.create_connection(("127.0.0.1", rx.port), timeout=30) as sock:
            sock.sendall((head + "Authorization: Bearer t\r\n\r\n").encode())
            assert _read_response(sock).startswith(b"HTTP/1.1 100")
            sock.sendall(body)
            response = b""
            while b"HTTP/1.1 200" not in response:
                chunk = sock.recv(65536)
                assert chunk, response
                response += chunk
        # refused: the final answer comes at once, no body is awaited, the connection closes
        with socket.create_connection(("127.0.0.1", rx.port), timeout=30) as sock:
            sock.sendall((head + "\r\n").encode())
            refused = _read_response(sock)
            assert refused.startswith(b"HTTP/1.1 401")
            assert b"connection: close" in refused.lower()
    assert len(stored_lines(tmp_path)) == 1


def test_stored_lines_are_compact_utf8_json_with_special_doubles_as_strings() -> None:
    from groundtrace.collectors.receiver import _otlp_json

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("t").start_as_current_span("Zürich ✓") as span:
        span.set_attribute(sc.GT_ANSWER_CONFIDENCE, float("nan"))
        span.set_attribute(sc.OI_DOCUMENT_SCORE, float("-inf"))
        span.set_attribute(sc.GT_EVIDENCE_COUNT, 2**62)
        span.set_attribute(sc.GT_RETRIEVAL_K, 1e-7)
    request = encode_spans(list(memory.get_finished_spans()))
    line = _otlp_json.request_to_json_line(request)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert "Zürich ✓".encode() in line  # raw UTF-8, not \\u escapes
    assert b"NaN," not in line and b"Infinity," not in line.replace(b'"-Infinity"', b"")
    document = json.loads(line)
    attrs = attr_map(document["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    assert attrs[sc.GT_ANSWER_CONFIDENCE] == {"doubleValue": "NaN"}
    assert attrs[sc.OI_DOCUMENT_SCORE] == {"doubleValue": "-Infinity"}
    assert attrs[sc.GT_EVIDENCE_COUNT] == {"intValue": str(2**62)}
    assert attrs[sc.GT_RETRIEVAL_K] == {"doubleValue": 1e-7}
