"""Processes that fork with groundtrace configured, run by ``tests/sdk/test_fork.py``.

``python -m tests.sdk.fork_scenarios NAME OUT_DIR`` runs one scenario in a fresh interpreter
(forking the pytest process itself would run pytest's machinery in the children) and prints
one JSON object: what the scenario measured. Every wait is bounded; a child that does not
finish in time is killed by its process id and reported.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime

CHILD_WAIT_S = 20.0  # the longest a child may take (it needs milliseconds)


class Rejecting(SpanExporter):
    """An exporter whose backend rejects every batch."""

    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.FAILURE


class Discarding(SpanExporter):
    """An exporter whose backend accepts and drops every batch."""

    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def record(count: int, name: str = "work") -> None:
    tracer = _runtime.get_tracer()
    for i in range(count):
        with tracer.start_as_current_span(f"{name}-{i}"):
            pass


def spans_in(path: Path) -> list[str]:
    """Names of the spans in an OTLP-JSON-lines file (every line must parse)."""
    if not path.exists():
        return []
    names: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                names.extend(span["name"] for span in ss["spans"])
    return names


def wait_child(pid: int, seconds: float = CHILD_WAIT_S) -> int | None:
    """The child's exit code, or None after killing it when it took longer than ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def fork_child(body: Callable[[], int]) -> int:
    """Fork; the child runs ``body`` and leaves with ``os._exit`` (its result, 99 on error)."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = body()
        finally:
            os._exit(code)
    return pid


def hang(out: Path) -> dict[str, Any]:
    """50 forks while three threads record spans; each child records and flushes one span."""
    provider = gt.configure(exporter=Discarding(), service_name="fork-hang")
    assert isinstance(provider, TracerProvider)
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            record(20, "busy")

    threads = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()

    def child() -> int:
        record(1, "child")
        flushed = provider.force_flush(5_000)
        stats = gt.export_stats()
        return 0 if flushed and stats.exported == 1 and stats.lost == 0 else 3

    results: list[int | None] = []
    for _ in range(50):
        time.sleep(0.002)  # let the threads get back into on_end
        results.append(wait_child(fork_child(child)))
        if results[-1] != 0:
            break  # one hung or failed child is enough to fail; don't wait on 49 more
    stop.set()
    for thread in threads:
        thread.join(5)
    return {"forks": len(results), "hung": results.count(None), "codes": results}


def live(out: Path) -> dict[str, Any]:
    """A forked child's 200 spans reach its file while it still runs."""
    gt.configure(exporter="file", file_path=out, service_name="fork-live")
    record(3, "parent")
    release_r, release_w = os.pipe()

    def child() -> int:
        record(200, "child")
        ready, _, _ = select.select([release_r], [], [], CHILD_WAIT_S)  # wait to be released
        return 0 if ready else 4

    pid = fork_child(child)
    os.close(release_r)
    path = out / f"traces-{pid}.jsonl"
    deadline = time.monotonic() + CHILD_WAIT_S
    seen: list[str] = []
    while time.monotonic() < deadline and len(seen) < 200:
        time.sleep(0.05)
        seen = spans_in(path)
    alive = os.waitpid(pid, os.WNOHANG)[0] == 0
    try:
        os.write(release_w, b"x")
    except BrokenPipeError:  # the child gave up waiting
        pass
    code = wait_child(pid)
    gt.shutdown()
    return {
        "exported_while_alive": len(seen),
        "alive": alive,
        "code": code,
        "child_names_only": all(n.startswith("child-") for n in seen),
        "parent": len(spans_in(out / f"traces-{os.getpid()}.jsonl")),
    }


def sys_exit(out: Path) -> dict[str, Any]:
    """A child that ends with ``sys.exit`` (atexit runs): its spans reach its file."""
    gt.configure(exporter="file", file_path=out, service_name="fork-exit")
    record(5, "parent")
    pid = os.fork()
    if pid == 0:
        try:
            record(7, "child")
        finally:
            sys.exit(0)  # atexit functions run, as in a gunicorn worker
    code = wait_child(pid)
    gt.shutdown()
    return {
        "code": code,
        "child": spans_in(out / f"traces-{pid}.jsonl"),
        "parent": len(spans_in(out / f"traces-{os.getpid()}.jsonl")),
    }


def warning(out: Path) -> dict[str, Any]:
    """The loss warning of a child counts the child's spans (parent: 5 rejected, child: 3)."""
    provider = gt.configure(exporter=Rejecting(), service_name="fork-warning")
    assert isinstance(provider, TracerProvider)
    record(5, "parent")
    provider.force_flush(5_000)
    pid = os.fork()
    if pid == 0:
        try:
            record(3, "child")
        finally:
            sys.exit(0)
    code = wait_child(pid)
    return {"code": code, "parent_failed": gt.export_stats().failed}


def _mp_target(count: int) -> None:
    record(count, f"mp{os.getpid()}")


def _pool_task(index: int) -> int:
    record(2, f"pool{os.getpid()}")
    return os.getpid()


def mp(out: Path) -> dict[str, Any]:
    """``multiprocessing`` fork children (they end with ``os._exit``): a Process and a Pool."""
    gt.configure(exporter="file", file_path=out, service_name="fork-mp")
    context = multiprocessing.get_context("fork")
    process = context.Process(target=_mp_target, args=(9,))
    process.start()
    process.join(CHILD_WAIT_S)
    if process.is_alive():
        process.kill()
        process.join()
    assert process.pid is not None
    with context.Pool(2) as pool:  # close and join: leaving the block alone terminates
        pids = pool.map(_pool_task, range(10), chunksize=1)
        pool.close()
        pool.join()
    with ProcessPoolExecutor(2, mp_context=context) as executor:
        pids += list(executor.map(_pool_task, range(10, 20)))
    gt.shutdown()
    files = {p.name: spans_in(p) for p in out.iterdir() if p.name != f"traces-{os.getpid()}.jsonl"}
    return {
        "process_code": process.exitcode,
        "process_spans": len(files.pop(f"traces-{process.pid}.jsonl", [])),
        "pool_recorded": 2 * len(pids),  # Pool and ProcessPoolExecutor workers
        "pool_exported": sum(len(names) for names in files.values()),
        "pool_workers": sorted({f"traces-{p}.jsonl" for p in pids}) == sorted(files),
    }


def shared_file(out: Path) -> dict[str, Any]:
    """Four forked children append large batches to one named file at the same time."""
    path = out / "shared.jsonl"
    gt.configure(exporter="file", file_path=path, service_name="fork-shared")
    go_r, go_w = os.pipe()
    payload = "x" * 2_000

    def child() -> int:
        select.select([go_r], [], [], CHILD_WAIT_S)
        tracer = _runtime.get_tracer()
        for i in range(300):
            with tracer.start_as_current_span(f"c{os.getpid()}-{i}") as span:
                span.set_attribute("payload", payload)
        gt.shutdown()
        return 0

    pids = [fork_child(child) for _ in range(4)]
    os.write(go_w, b"go")  # all four start together
    codes = [wait_child(pid) for pid in pids]
    gt.shutdown()
    files = sorted(out.glob("shared*.jsonl"))
    lines = [line for f in files for line in f.read_text("utf-8").splitlines() if line.strip()]
    names = [name for f in files for name in spans_in(f)]
    return {
        "codes": codes,
        "files": len(files),
        "lines": len(lines),
        "spans": len(names),
        "distinct": len(set(names)),
        "per_child": sorted(sum(n.startswith(f"c{pid}-") for n in names) for pid in pids),
    }


class _Receiver(BaseHTTPRequestHandler):
    """OTLP/HTTP protobuf: counts the spans of every request body that parses."""

    protocol_version = "HTTP/1.1"  # keep-alive: the exporter's connection stays open
    spans = 0
    corrupt = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            request = ExportTraceServiceRequest.FromString(body)
            count = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
            with _Receiver.lock:
                _Receiver.spans += count
            status = 200
        except Exception:
            with _Receiver.lock:
                _Receiver.corrupt += 1
            status = 400
        data = ExportTraceServiceResponse().SerializeToString()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def otlp_http(out: Path) -> dict[str, Any]:
    """The parent exported over a keep-alive connection; four children export at once."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    provider = gt.configure(exporter="otlp_http", endpoint=endpoint, service_name="fork-otlp")
    assert isinstance(provider, TracerProvider)
    record(5, "parent")
    provider.force_flush(10_000)
    go_r, go_w = os.pipe()

    def child() -> int:
        select.select([go_r], [], [], CHILD_WAIT_S)
        record(10, "child")
        flushed = provider.force_flush(10_000)
        stats = gt.export_stats()
        return 0 if flushed and stats.exported == 10 and stats.lost == 0 else 3

    pids = [fork_child(child) for _ in range(4)]
    os.write(go_w, b"go" * 4)
    codes = [wait_child(pid) for pid in pids]
    record(5, "parent")
    provider.force_flush(10_000)
    stats = gt.export_stats()
    gt.shutdown()
    server.shutdown()
    return {
        "codes": codes,
        "received": _Receiver.spans,
        "corrupt": _Receiver.corrupt,
        "parent_exported": stats.exported,
    }


SCENARIOS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "otlp_http": otlp_http,
    "hang": hang,
    "live": live,
    "sys_exit": sys_exit,
    "warning": warning,
    "mp": mp,
    "shared_file": shared_file,
}


def main() -> None:
    name, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    result = SCENARIOS[name](out)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
