"""The receiver as a process (`groundtrace collect serve`): SIGTERM and SIGKILL."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors.receiver import BatchStore

PROTO = "application/x-protobuf"
STARTUP_TIMEOUT = 60.0


def make_spans(n: int, tag: str) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test-receiver-process")
    for i in range(n):
        with tracer.start_as_current_span(f"{tag}-{i}"):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def span_ids(request: ExportTraceServiceRequest) -> set[str]:
    return {
        s.span_id.hex() for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans
    }


class ServeProcess:
    """``groundtrace collect serve`` in a subprocess; the bound endpoint read from its stdout."""

    def __init__(self, out_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        command = [
            sys.executable,
            "-c",
            "from groundtrace.analyzer.cli import main; main()",
            "collect",
            "serve",
            "--port",
            "0",
            "--out",
            str(out_dir),
            *extra,
        ]
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        self.reader = threading.Thread(
            target=lambda: [lines.put(line) for line in stdout], daemon=True
        )
        self.reader.start()
        try:
            first = lines.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            pytest.fail(
                f"receiver did not start: {self.proc.stderr.read() if self.proc.stderr else ''}"
            )
        assert first.startswith("listening on http://127.0.0.1:"), first
        self.endpoint = first.split()[2].rstrip(",")
        self.port = int(self.endpoint.split(":")[2].split("/")[0])
        self.lines = lines

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=STARTUP_TIMEOUT)

    def kill_if_running(self) -> None:
        """Kill the server if it still runs, then close its pipes (the reader sees EOF)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=STARTUP_TIMEOUT)
        self.reader.join(timeout=STARTUP_TIMEOUT)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def stored_span_ids(out_dir: Path, *, allow_torn_tail: bool) -> set[str]:
    ids: set[str] = set()
    for path in sorted(out_dir.glob("*.jsonl")):
        data = path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        if tail:
            assert allow_torn_tail, f"{path} ends inside a line"
        for line in lines:
            document = json.loads(line)
            for rs in document["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    ids.update(span["spanId"] for span in ss["spans"])
    return ids


def test_sigterm_finishes_the_inflight_request_and_exits_0(tmp_path: Path) -> None:
    server = ServeProcess(
        tmp_path, "--max-inflight-requests", "1", env={"GROUNDTRACE_RECEIVER_TOKEN": "tok"}
    )
    try:
        auth = {"content-type": PROTO, "authorization": "Bearer tok"}
        first = encode_spans(make_spans(3, "first"))
        assert (
            httpx.post(
                server.endpoint, content=first.SerializeToString(), headers={"content-type": PROTO}
            ).status_code
            == 401
        )
        assert (
            httpx.post(server.endpoint, content=first.SerializeToString(), headers=auth).status_code
            == 200
        )
        # A request in flight when SIGTERM arrives: headers and part of the body sent.
        second = encode_spans(make_spans(2, "second"))
        body = second.SerializeToString()
        held = socket.create_connection(("127.0.0.1", server.port), timeout=STARTUP_TIMEOUT)
        head = (
            f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\r\n"
            f"Content-Type: {PROTO}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        held.sendall(head + body[:5])
        # Wait (bounded) until the held request is admitted: the only slot is then taken.
        for _ in range(200):
            probe = httpx.post(server.endpoint, content=b"", headers=auth)
            if probe.status_code == 429:
                break
        assert probe.status_code == 429
        server.proc.send_signal(signal.SIGTERM)
        held.sendall(body[5:])
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = held.recv(65536)
            if not chunk:
                break
            response += chunk
        held.close()
        code = server.proc.wait(timeout=STARTUP_TIMEOUT)
    finally:
        server.kill_if_running()
    assert response.startswith(b"HTTP/1.1 200"), response
    assert b"connection: close" in response.lower()
    assert code == 0
    stored = stored_span_ids(tmp_path, allow_torn_tail=False)
    assert span_ids(first) | span_ids(second) == stored
    server.reader.join(timeout=STARTUP_TIMEOUT)
    rest = []
    while not server.lines.empty():
        rest.append(server.lines.get_nowait())
    assert any(line.startswith("stopped: 2 batches, 5 spans") for line in rest), rest


def test_every_acknowledged_batch_survives_sigkill(tmp_path: Path) -> None:
    clients, max_batches, kill_after = 6, 150, 120
    server = ServeProcess(tmp_path)
    acked: list[ExportTraceServiceRequest] = []
    lock = threading.Lock()
    enough = threading.Event()

    def run(c: int) -> None:
        with httpx.Client(timeout=30) as client:
            for b in range(max_batches):  # bounded
                request = encode_spans(make_spans(4, f"c{c}-b{b}"))
                try:
                    response = client.post(
                        server.endpoint,
                        content=request.SerializeToString(),
                        headers={"content-type": PROTO},
                    )
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 200:
                    with lock:
                        acked.append(request)
                        if len(acked) >= kill_after:
                            enough.set()

    threads = [threading.Thread(target=run, args=(c,)) for c in range(clients)]
    try:
        for t in threads:
            t.start()
        assert enough.wait(timeout=300), "clients never reached the kill point"
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=STARTUP_TIMEOUT)
        for t in threads:
            t.join(timeout=120)
    finally:
        server.kill_if_running()
    assert server.proc.returncode == -signal.SIGKILL
    stored = stored_span_ids(tmp_path, allow_torn_tail=True)
    with lock:
        acknowledged = list(acked)
    assert len(acknowledged) >= kill_after
    missing = [r for r in acknowledged if not span_ids(r) <= stored]
    assert not missing, f"{len(missing)} acknowledged batches lost"
    # Reopening the directory cuts any torn tail; every file then parses line by line.
    store = BatchStore(tmp_path)
    store.start()
    store.close()
    assert stored_span_ids(tmp_path, allow_torn_tail=False) >= set().union(
        *map(span_ids, acknowledged)
    )
