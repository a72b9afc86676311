"""Phoenix's own client (``phoenix.client``) against the write-back's REST calls, side by side.

Run with the Python of ``.venv-phoenix`` (it has Arize Phoenix, ``arize-phoenix-client`` and
httpx) inside a private network namespace; it starts Phoenix on loopback, sends TRACES small
traces over OTLP/HTTP, then writes N trace annotations per round, in batches of 100, once
with httpx posting ``/v1/trace_annotations?sync=true`` (what groundtrace's write-back does) and
once with ``Client().traces.log_trace_annotations(..., sync=True)``, alternating the order
round by round; it prints one JSON line: the median seconds of each and their ratio, and what
each raises when Phoenix refuses (a trace it does not have).

Usage::

    unshare -n sh -c 'ip link set lo up && .venv-phoenix/bin/python \
        -m tests.integration.phoenix_client_compare --traces 50 --rounds 7'
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

BATCH = 100


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _send(url: str, traces: int) -> list[str]:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"openinference.project.name": "cmp"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    ids = []
    for i in range(traces):
        with provider.get_tracer("cmp").start_as_current_span(f"request {i}") as span:
            ids.append(f"{span.get_span_context().trace_id:032x}")
    provider.shutdown()
    return ids


def _annotations(trace_ids: list[str], round_: int, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "trace_id": tid, "name": name, "annotator_kind": "CODE",
            "result": {"label": "pass", "score": (round_ % 10) / 10},
            "metadata": {"source": "groundtrace"}, "identifier": f"{tag}:{tid}",
        }
        for tid in trace_ids
        for name in ("gate", "adherence", "answer_relevance", "context_relevance")
    ]  # fmt: skip


def _by_hand(http: httpx.Client, url: str, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        response = http.post(
            f"{url}/v1/trace_annotations", params={"sync": "true"},
            json={"data": rows[start : start + BATCH]},
        )  # fmt: skip
        response.raise_for_status()


def _with_client(client: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        client.traces.log_trace_annotations(
            trace_annotations=rows[start : start + BATCH], sync=True
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gt-pxc-"))
    port, grpc = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_WORKING_DIR": str(work)}  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with (work / "phoenix.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:  # bounded wait for readiness
                try:
                    if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
            trace_ids = _send(url, args.traces)
            while time.monotonic() < deadline:  # bounded wait for ingestion
                spans = httpx.get(f"{url}/v1/projects/cmp/spans", params={"limit": 1000})
                if spans.status_code == 200 and len(spans.json()["data"]) >= args.traces:
                    break
                time.sleep(0.5)
            from phoenix.client import Client

            client = Client(base_url=url)
            hand: list[float] = []
            lib: list[float] = []
            with httpx.Client(timeout=60) as http:
                for r in range(args.rounds):
                    order = [("hand", hand), ("client", lib)]
                    for name, times in order if r % 2 == 0 else order[::-1]:
                        rows = _annotations(trace_ids, r, name)
                        started = time.perf_counter()
                        if name == "hand":
                            _by_hand(http, url, rows)
                        else:
                            _with_client(client, rows)
                        times.append(time.perf_counter() - started)
                bogus = _annotations(["0" * 31 + "1"], 0, "x")[:1]
                refused_hand = http.post(
                    f"{url}/v1/trace_annotations", params={"sync": "true"}, json={"data": bogus}
                )
            try:
                client.traces.log_trace_annotations(trace_annotations=bogus, sync=True)
                refused_client = "accepted"
            except Exception as exc:  # what the client raises, reported as it is
                refused_client = f"{type(exc).__name__}: {exc}"[:300]
            result = {
                "annotations_per_round": args.traces * 4,
                "rounds": args.rounds,
                "median_s": {"hand": statistics.median(hand), "client": statistics.median(lib)},
                "client_over_hand": statistics.median(lib) / statistics.median(hand),
                "refused_hand": [refused_hand.status_code, refused_hand.text[:200]],
                "refused_client": refused_client,
            }
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
