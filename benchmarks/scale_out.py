"""Calls per second of model-calling units: the local executor against Ray with 1-8 workers.

Every configuration runs the same units -- one chat completion each, through the shared model
client (no cache by default, so every unit makes its call; ``--cache`` gives each run a fresh
call cache in a scratch folder, as every analysis has one in its run folder, so the cost of
storing each answer and of claiming each call is measured too) -- against one local
OpenAI-compatible server
(the test suite's threaded server, ``tests.support``) that answers each call after a fixed
latency. Each worker (the local executor is one) keeps ``--per-worker`` calls in flight, so
``n`` workers can at best reach ``n * per_worker / latency`` calls/s. Reported per
configuration:

* ``calls_per_s``: units / wall time of the run, worker start-up included;
* ``steady_calls_per_s``: units between the first and the last result / the time between them
  (start-up excluded);
* for Ray, ``warm``: the same figures for a second ``map`` of the same executor, whose workers
  are already running (every map of a run after the first);
* ``speedup_vs_local`` and, for Ray, ``scaling_efficiency``: steady rate / (workers x the
  steady rate of Ray with one worker);
* ``identical``: every configuration returned the same results, unit for unit.

``local_wide`` (one process, as many calls in flight as the largest Ray run) shows what this
machine and the server sustain at all: the ceiling the Ray runs are bounded by on one host.

The local run is the reference measured side by side in the same process. Ray binds every
interface, so run this in a private network namespace, from the repository root::

    unshare -n sh -c 'ip link set lo up && python -m benchmarks.scale_out'

It starts a private Ray instance (``--cpus`` CPUs, no dashboard, 100 MB object store) unless
``--address`` names a running cluster, and prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundtrace.analyzer.executor import Executor, LocalExecutor, RayExecutor, unit_seed
from groundtrace.analyzer.llm import CallCache, ChatRequest, ModelClient, RetryPolicy
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, default_handler


@dataclass(frozen=True, slots=True)
class Call:
    """One unit: a chat completion whose text names the unit (pickles for Ray)."""

    client: ModelClient

    async def __call__(self, unit: int) -> str:
        text = f"unit {unit}"
        request = ChatRequest(
            model="bench", messages=({"role": "user", "content": text},),
            seed=unit_seed(0, text) % 2**31,
        )  # fmt: skip
        result = await self.client.complete(request)
        return result.text if result.ok else f"failed: {result.kind}"


def _measure(
    executor: Executor, work: Call, units: Sequence[int]
) -> tuple[dict[str, Any], list[str]]:
    arrivals: list[float] = []
    started = time.perf_counter()
    results = asyncio.run(
        executor.map(work, units, on_result=lambda _i, _r: arrivals.append(time.perf_counter()))
    )
    wall = time.perf_counter() - started
    steady = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else None
    rates = {"calls_per_s": round(len(units) / wall, 2), "wall_s": round(wall, 3),
             "steady_calls_per_s": None if steady is None else round(steady, 2)}  # fmt: skip
    return rates, results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=480, help="units per configuration")
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    parser.add_argument("--per-worker", type=int, default=4, help="calls in flight per worker")
    parser.add_argument("--workers", default="1,2,4,8", help="Ray worker counts")
    parser.add_argument("--address", default=None, help="a running Ray cluster")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the private Ray instance")
    parser.add_argument("--cache", action="store_true", help="a fresh call cache per run")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private namespace: loopback only

    def handler(req: ServerRequest) -> Reply:
        reply = default_handler(req)
        return Reply(content=reply.content, delay=args.latency)

    units = list(range(args.calls))
    report: dict[str, Any] = {
        "calls": args.calls, "latency_s": args.latency, "per_worker": args.per_worker,
        "cpus": os.cpu_count(), "cache": args.cache, "runs": {},
    }  # fmt: skip
    outputs: dict[str, list[str]] = {}
    scratch = tempfile.TemporaryDirectory(prefix="scale-out-")
    fresh = itertools.count()
    with scratch, OpenAICompatServer(handler=handler) as server:
        retry = RetryPolicy(max_attempts=3)

        def call(in_flight: int) -> Call:
            """The work, with a call cache of its own under ``--cache``."""
            cache = CallCache(f"{scratch.name}/{next(fresh)}.sqlite") if args.cache else None
            return Call(ModelClient(server.base_url, concurrency=in_flight, timeout=60.0,
                                    retry=retry, cache=cache))  # fmt: skip

        report["runs"]["local"], outputs["local"] = _measure(
            LocalExecutor(args.per_worker), call(args.per_worker), units
        )
        # the ceiling of this machine and server: one process with the most calls in flight
        widest = max(int(w) for w in args.workers.split(",")) * args.per_worker
        report["runs"]["local_wide"], outputs["local_wide"] = _measure(
            LocalExecutor(widest), call(widest), units
        )
        report["runs"]["local_wide"]["in_flight"] = widest
        for n in (int(w) for w in args.workers.split(",")):
            executor = RayExecutor(
                address=args.address, workers=n, concurrency=args.per_worker,
                local_cpus=args.cpus,
            )  # fmt: skip
            name = f"ray_{n}"
            try:
                report["runs"][name], outputs[name] = _measure(
                    executor, call(args.per_worker), units
                )
                warm, outputs[f"{name}_warm"] = _measure(executor, call(args.per_worker), units)
            finally:  # stops its workers (and the private instance it started)
                executor.close()
            report["runs"][name] |= {"workers": n, "warm": warm}
        report["server_requests"] = server.request_count
    local = report["runs"]["local"]["steady_calls_per_s"]
    one = report["runs"].get("ray_1", {}).get("steady_calls_per_s")
    warm_one = report["runs"].get("ray_1", {}).get("warm", {}).get("steady_calls_per_s")
    for name, run in report["runs"].items():
        rate = run["steady_calls_per_s"]
        in_flight = run.get("in_flight", run.get("workers", 1) * args.per_worker)
        run["ideal_calls_per_s"] = round(in_flight / args.latency, 1)
        run["speedup_vs_local"] = round(rate / local, 3) if rate and local else None
        if name.startswith("ray_") and rate and one:
            run["scaling_efficiency"] = round(rate / (run["workers"] * one), 3)
        warm = run.get("warm", {}).get("steady_calls_per_s")
        if warm and warm_one:
            run["warm"]["scaling_efficiency"] = round(warm / (run["workers"] * warm_one), 3)
    first = outputs["local"]
    report["identical"] = all(out == first for out in outputs.values())
    report["all_ok"] = not any(
        text.startswith("failed") for out in outputs.values() for text in out
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
