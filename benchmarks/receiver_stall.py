"""Receiver stall benchmark: how long a small client waits while big requests are decoded, and
the receiver's peak memory.

``groundtrace collect serve`` runs in a subprocess (a fresh one per scenario, so its peak RSS,
``VmHWM`` in ``/proc``, belongs to that scenario alone). A small client posts a 1-span protobuf
batch every 20 ms on a keep-alive connection while ``--big`` clients each post one body of
tiny spans (trace id, span id and a one-letter name: ~34 bytes a span, 508k spans in 16 MiB)
at once. Reported per scenario:

* ``small_worst_wait_s`` / ``small_p50_s``: the small client's slowest and median round trip
  among the posts that overlapped the big requests (start of the first to end of the last);
* ``big``: each big request's status and seconds (200, or 429/503 when it was refused);
* ``peak_rss_mib`` / ``rss_rise_mib``: the server's peak RSS, and how far it rose above its
  RSS after a warm-up post;
* ``stored_lines`` against ``acknowledged``: every 200 is a line on disk (``lost`` = 0).

Usage, from the repository root::

    python benchmarks/receiver_stall.py [--big 1 4] [--mib 16]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from ingest import start_receiver  # run as a script: benchmarks/ is on sys.path
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

PROTO = {"content-type": "application/x-protobuf"}
_SPAN_BYTES = 33  # one tiny span inside its ScopeSpans, as encoded below


def tiny_spans_body(size: int, tag: int) -> bytes:
    """An ``ExportTraceServiceRequest`` of at most ``size`` bytes made of tiny spans."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    trace_id = tag.to_bytes(16, "big")
    for i in range((size - 64) // _SPAN_BYTES):
        spans.add(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"), name="s")
    body = request.SerializeToString()
    assert len(body) <= size, len(body)
    return body


def one_span_body(i: int) -> bytes:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = (7).to_bytes(16, "big"), (i + 1).to_bytes(8), "x"
    return request.SerializeToString()


def status_kib(pid: int, key: str) -> int:
    """A ``VmRSS``/``VmHWM`` line of ``/proc/<pid>/status`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def scenario(big: int, body: bytes, workdir: Path) -> dict[str, Any]:
    out_dir = workdir / f"received-{big}"
    proc, endpoint, _ = start_receiver(out_dir)
    try:
        with httpx.Client(timeout=120) as warm:
            assert warm.post(endpoint, content=one_span_body(0), headers=PROTO).status_code == 200
        time.sleep(0.5)
        rss_before = status_kib(proc.pid, "VmRSS")
        small: list[tuple[float, float, int]] = []  # (start, seconds, status)
        bigs: list[tuple[float, float, int]] = []
        stop = threading.Event()

        def small_client() -> None:
            with httpx.Client(timeout=120) as client:
                i = 1
                while not stop.is_set():
                    started = time.perf_counter()
                    answer = client.post(endpoint, content=one_span_body(i), headers=PROTO)
                    small.append((started, time.perf_counter() - started, answer.status_code))
                    i += 1
                    time.sleep(0.02)

        def big_client() -> None:
            with httpx.Client(timeout=120) as client:
                started = time.perf_counter()
                answer = client.post(endpoint, content=body, headers=PROTO)
                bigs.append((started, time.perf_counter() - started, answer.status_code))

        watcher = threading.Thread(target=small_client)
        watcher.start()
        time.sleep(0.3)
        posters = [threading.Thread(target=big_client) for _ in range(big)]
        for thread in posters:
            thread.start()
        for thread in posters:
            thread.join()
        time.sleep(0.3)
        stop.set()
        watcher.join()
        peak = status_kib(proc.pid, "VmHWM")
        first = min(start for start, _, _ in bigs)
        last = max(start + seconds for start, seconds, _ in bigs)
        overlapping = [s for start, s, _ in small if start + s >= first and start <= last]
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=300)
    acknowledged = sum(status == 200 for _, _, status in small + bigs) + 1  # + the warm-up
    stored = sum(
        line.count(b"\n") for path in out_dir.glob("*.jsonl") for line in [path.read_bytes()]
    )
    return {
        "big_requests": big,
        "small_posts_during": len(overlapping),
        "small_worst_wait_s": round(max(overlapping), 3),
        "small_p50_s": round(statistics.median(overlapping), 4),
        "small_statuses": sorted({status for _, _, status in small}),
        "big": [{"status": status, "seconds": round(s, 2)} for _, s, status in sorted(bigs)],
        "rss_before_mib": round(rss_before / 1024, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "rss_rise_mib": round((peak - rss_before) / 1024, 1),
        "acknowledged": acknowledged,
        "stored_lines": stored,
        "lost": acknowledged - stored,
        "exit_code": code,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--mib", type=float, default=16.0)
    args = parser.parse_args()
    body = tiny_spans_body(int(args.mib * 1024 * 1024), tag=1)
    result: dict[str, Any] = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "loadavg_1m_before": round(os.getloadavg()[0], 2),
        "body_mib": round(len(body) / 2**20, 2),
        "spans_per_body": (int(args.mib * 1024 * 1024) - 64) // _SPAN_BYTES,
    }
    with tempfile.TemporaryDirectory(prefix="gt-bench-stall-") as tmp:
        result["scenarios"] = [scenario(n, body, Path(tmp)) for n in args.big]
    result["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
