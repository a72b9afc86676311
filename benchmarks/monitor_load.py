"""Load on the online monitor: does evaluating a sample slow ingest, how late are the verdicts?

Prints ONE JSON object:

* ``flat_out``: ``groundtrace monitor run --port`` judging a ``--sample`` of the traces with the
  lexical judge, against ``groundtrace collect serve`` (the same receiver, no evaluation), each
  loaded by N keep-alive clients x M protobuf batches as fast as they are answered; rounds
  alternate the two (machines are noisy: ratios of the same run only). ``ratio`` is the
  median of the per-round ingest throughput with evaluation on / off (target >= 0.9).
* ``steady``: the monitor under a steady ``--rate`` batches/s for ``--seconds``: evaluation lag
  p50/p95 from the monitor's status (trace complete -> verdict journaled; a trace counts as
  complete ``complete_after`` seconds after its last span, which is added), the traces
  evaluated, and the monitor's resident memory over the run (mean of each quarter, MiB).

The spans come from the SDK decorators over real HotpotQA questions, as in ``ingest.py``.

Usage::

    python -m benchmarks.monitor_load [--traces 4000] [--clients 4] [--batches 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from benchmarks.ingest import PROTO, make_spans

CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]
COMPLETE_AFTER = 1.0


def _rules(folder: Path, sample: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rules.toml"
    path.write_text(
        f"[monitor]\ncomplete_after = {COMPLETE_AFTER}\nbatch_size = 50\n\n"
        f'[[rule]]\nname = "grounded"\nanalysis = "judge"\nsample = {sample}\n'
        'checks = ["adherence"]\n[rule.config]\njudge = "lexical"\n',
        encoding="utf-8",
    )
    return path


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _start(command: list[str], port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except httpx.HTTPError:
            if proc.poll() is not None:
                raise RuntimeError(f"did not start: {''.join(lines.queue)}") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("did not listen within 120 s")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server(kind: str, folder: Path, sample: float) -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    traces = folder / "traces"
    if kind == "off":
        command = [*CLI, "collect", "serve", "--port", str(port), "--out", str(traces)]
    else:
        command = [*CLI, "monitor", "run", "--rules", str(_rules(folder, sample)), "--state",
                   str(folder / "state"), "--traces", str(traces), "--port", str(port)]  # fmt: skip
    return _start(command, port), port


def _load(port: int, payloads: list[list[bytes]], rate: float | None = None) -> tuple[float, int]:
    """Send every payload (one list per client); seconds taken and batches acknowledged."""
    acked = [0] * len(payloads)
    barrier = threading.Barrier(len(payloads) + 1)
    url = f"http://127.0.0.1:{port}/v1/traces"

    def run(c: int) -> None:
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            started = time.monotonic()
            for n, payload in enumerate(payloads[c]):
                if rate is not None:
                    time.sleep(max(0.0, started + n * len(payloads) / rate - time.monotonic()))
                reply = client.post(url, content=payload, headers={"content-type": PROTO})
                acked[c] += reply.status_code == 200

    threads = [threading.Thread(target=run, args=(c,)) for c in range(len(payloads))]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - started, sum(acked)


def _payloads(spans: list[Any], clients: int, batches: int, per_batch: int) -> list[list[bytes]]:
    return [
        [encode_spans(spans[(c * batches + b) * per_batch : (c * batches + b + 1) * per_batch])
         .SerializeToString() for b in range(batches)]
        for c in range(clients)
    ]  # fmt: skip


def flat_out(args: argparse.Namespace, spans: list[Any], workdir: Path) -> dict[str, Any]:
    per_round = args.clients * args.batches * args.spans_per_batch
    rounds: list[dict[str, float]] = []
    for r in range(args.rounds):
        chunk = spans[r * per_round : (r + 1) * per_round]
        payloads = _payloads(chunk, args.clients, args.batches, args.spans_per_batch)
        figures: dict[str, float] = {}
        for kind in ("on", "off") if r % 2 == 0 else ("off", "on"):
            folder = workdir / f"flat-{r}-{kind}"
            proc, port = _server(kind, folder, args.sample)
            try:
                seconds, acked = _load(port, payloads)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(120)
            figures[kind] = acked * args.spans_per_batch / seconds
        rounds.append({k: round(v) for k, v in figures.items()})
    ratios = [r["on"] / r["off"] for r in rounds]
    return {"spans_per_s": rounds, "ratio": round(statistics.median(ratios), 3),
            "ratios": [round(x, 3) for x in ratios]}  # fmt: skip


def steady(args: argparse.Namespace, spans: list[Any], workdir: Path) -> dict[str, Any]:
    batches = int(args.rate * args.seconds)
    offset = args.rounds * args.clients * args.batches * args.spans_per_batch
    chunk = spans[offset : offset + batches * args.spans_per_batch]
    payloads = _payloads(chunk, 1, len(chunk) // args.spans_per_batch, args.spans_per_batch)
    folder = workdir / "steady"
    proc, port = _server("on", folder, args.sample)
    memory: list[float] = []
    done = threading.Event()

    def sample_memory() -> None:
        while not done.wait(0.2):
            memory.append(_rss_mib(proc.pid))

    sampler = threading.Thread(target=sample_memory, daemon=True)
    sampler.start()
    try:
        seconds, acked = _load(port, payloads, rate=args.rate)
        time.sleep(COMPLETE_AFTER + 3)  # the last traces complete and are judged
    finally:
        done.set()
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    status = json.loads((folder / "state" / "status.json").read_text("utf-8"))
    rule = status["rules"]["grounded"]
    lag = rule["lag_seconds"] or {}
    quarter = max(1, len(memory) // 4)
    return {
        "batches_per_s": round(acked / seconds, 1), "seconds": round(seconds, 1),
        "traces_evaluated": rule["evaluated"] + rule["counts"].get("not_scored", 0),
        "counts": rule["counts"],
        "lag_p50_s": round(lag.get("p50", 0.0) + COMPLETE_AFTER, 3),
        "lag_p95_s": round(lag.get("p95", 0.0) + COMPLETE_AFTER, 3),
        "rss_mib_first_quarter": round(statistics.mean(memory[:quarter]), 1),
        "rss_mib_last_quarter": round(statistics.mean(memory[-quarter:]), 1),
        "rss_mib_by_quarter": [round(statistics.mean(memory[i * quarter : (i + 1) * quarter]), 1)
                               for i in range(4)],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batches", type=int, default=40, help="batches per client per round")
    parser.add_argument("--spans-per-batch", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=float, default=0.1)
    parser.add_argument("--rate", type=float, default=20.0, help="steady batches per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    spans_needed = args.rounds * args.clients * args.batches + int(args.rate * args.seconds) + 1
    spans = make_spans(spans_needed * args.spans_per_batch // 4 + 1)
    with tempfile.TemporaryDirectory() as tmp:
        report = {
            "sample": args.sample,
            "flat_out": flat_out(args, spans, Path(tmp)),
            "steady": steady(args, spans, Path(tmp)),
            "cpus": os.cpu_count(),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
