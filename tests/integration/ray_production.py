"""The Ray executor as users run it: joining a running cluster, one call per distinct request
across workers, and the shared rate limit with no burst across drivers.

Run inside a private network namespace, like :mod:`tests.integration.ray_scenario` (whose
cluster it starts, one node here)::

    unshare -n sh -c 'ip link set lo up && python -m tests.integration.ray_production'

It measures:

* ``joins``: ``groundtrace audit run --executor ray`` without ``--ray-address`` beside the
  running cluster, found once through ``RAY_ADDRESS`` and once through the address file
  ``ray start`` leaves (``$RAY_TMPDIR/ray/ray_current_cluster``): exit code and what it said;
* ``coalesce``: two workers given units that ask identical requests at the same time: the
  calls the server received, and the answers every unit got (the server numbers its answers,
  like a sampling model whose every call can answer differently);
* ``schedule``: two driver processes (one worker each) at one endpoint with a shared
  ``rate_limit``: the call starts the server saw, their smallest gap and the most in any
  one-second window.

It prints one JSON line.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.analyzer.executor import RayExecutor
from groundtrace.analyzer.llm import CallCache, ChatRequest, ModelClient, RetryPolicy, WorkerCalls
from groundtrace.analyzer.llm._limit import RateLimiter
from tests.analyzer.audit.test_audit_models import _reply
from tests.integration.ray_scenario import (
    DRIVERS,
    RAY_ENV,
    driver_ready,
    ray_cluster,
    run_drivers,
    scenario_main,
)
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

#: The shared rate (calls/s) and the calls each of the two drivers makes.
RATE = 8.0
CALLS = 24
#: Distinct requests of the coalescing map, each asked by ``ASKS`` units at once.
DISTINCT = 4
ASKS = 2
#: Seconds the server takes per coalesced call (the second asker arrives meanwhile).
LATENCY = 0.5


def _audit(out: Path, url: str) -> list[str]:
    """A small ``audit run`` on Ray, without ``--ray-address``."""
    return [
        sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()",
        "audit", "run", "--out", str(out), "--answerer", url, "--model", "m",
        "--judge", url, "--judge-model", "m", "--questions", "patent-grant", "--sources", "3",
        "--concurrency", "2", "--executor", "ray", "--ray-workers", "1",
    ]  # fmt: skip


def joins(temp: Path, address: str) -> dict[str, Any]:
    """The command beside a running cluster, found by ``RAY_ADDRESS`` or ``ray start``'s file."""
    base = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | RAY_ENV
    found = {
        "RAY_ADDRESS": base | {"RAY_ADDRESS": address},
        "ray start": base | {"RAY_TMPDIR": str(temp)},  # the head's folder is <temp>/ray
    }
    out: dict[str, Any] = {"address": address}
    with OpenAICompatServer(handler=_reply) as server:
        for i, (how, env) in enumerate(found.items()):
            command = _audit(temp / f"join-{i}", server.base_url)
            run = subprocess.run(command, env=env, capture_output=True, text=True,
                                 timeout=600, check=False)  # fmt: skip
            lines = [line for line in run.stderr.splitlines() if "Ray" in line]
            out[how] = {"exit_code": run.returncode, "ray_lines": lines[:3],
                        "stderr_tail": run.stderr[-600:]}  # fmt: skip
    return out


@dataclass(frozen=True)
class _Ask:
    """Unit ``i`` asks the request numbered ``i`` (units share numbers); pickles for a worker."""

    client: ModelClient

    async def __call__(self, i: int) -> str:
        message = {"role": "user", "content": f"question {i}"}
        result = await self.client.complete(ChatRequest(model="m", messages=(message,)))
        return result.text if result.ok else f"failed: {result.kind}"


def coalesce(temp: Path, address: str) -> dict[str, Any]:
    """Identical requests from units on two workers, all in flight at once."""
    answered = itertools.count()
    lock = threading.Lock()

    def handler(req: ServerRequest) -> Reply:
        with lock:
            n = next(answered)
        return Reply(content=f"{last_user_text(req)} -> answer #{n}", delay=LATENCY)

    units = [i for i in range(DISTINCT) for _ in range(ASKS)]  # each asked by two units in a row
    executor = RayExecutor(
        address=address, workers=2, concurrency=DISTINCT * ASKS // 2, carry=WorkerCalls()
    )  # the workers' client counters come back with each unit
    try:
        asyncio.run(executor.map(_pid, [0, 1]))  # both workers up: the asks come together
        with OpenAICompatServer(handler=handler) as server:
            cache = CallCache(temp / "coalesce.sqlite")
            client = ModelClient(server.base_url, cache=cache, concurrency=8, timeout=60.0,
                                 retry=RetryPolicy(seed=1))  # fmt: skip
            texts = asyncio.run(executor.map(_Ask(client), units))
            calls = server.request_count
    finally:
        executor.close()
    answers = {i: sorted({t for u, t in zip(units, texts, strict=True) if u == i})
               for i in range(DISTINCT)}  # fmt: skip
    counts = client.stats.snapshot()
    return {
        "units": len(units), "distinct": DISTINCT, "calls": calls,
        "answers_per_request": {str(i): len(a) for i, a in answers.items()},
        "failed": sum(t.startswith("failed") for t in texts),
        "requests": counts.requests, "coalesced": counts.coalesced,
        "api_calls": counts.api_calls, "cache_hits": counts.cache_hits,
    }  # fmt: skip


#: When the rate limit let each call of this worker process start (epoch seconds).
_STARTS: list[float] = []


def _note_starts() -> None:
    """Record in :data:`_STARTS` when each call passes the limiter (once per process)."""
    if getattr(RateLimiter.acquire, "noted", False):
        return
    acquire = RateLimiter.acquire

    async def noted(self: RateLimiter) -> None:
        await acquire(self)
        _STARTS.append(time.time())

    noted.noted = True  # type: ignore[attr-defined]
    RateLimiter.acquire = noted  # type: ignore[method-assign]


@dataclass(frozen=True)
class _Call:
    """One rate-limited call of the driver named ``name`` (pickles for a worker)."""

    client: ModelClient
    name: str

    async def __call__(self, i: int) -> bool:
        _note_starts()
        message = {"role": "user", "content": f"{self.name} call {i}"}
        result = await self.client.complete(ChatRequest(model=self.name, messages=(message,)))
        return result.ok


async def _starts(_: int) -> list[float]:
    return list(_STARTS)


async def _pid(_: int) -> int:
    return os.getpid()


def drive(address: str, url: str, name: str, folder: Path) -> None:
    """One driver: ready with the other one, then its calls and their starts."""
    executor = RayExecutor(address=address, workers=1, concurrency=4)
    client = ModelClient(url, concurrency=4, timeout=60.0, rate_limit=RATE,
                         retry=RetryPolicy(seed=1, max_attempts=4))  # fmt: skip
    try:
        driver_ready(executor, folder, name)
        ok = asyncio.run(executor.map(_Call(client, name), list(range(CALLS))))
        (starts,) = asyncio.run(executor.map(_starts, [0]))
    finally:
        executor.close()
    print(json.dumps({"driver": name, "ok": sum(ok), "starts": starts}))


def _most_in_a_second(times: list[float]) -> int:
    """The most starts in any window of one second (each window starting at a start)."""
    return max((bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times)), default=0)


def schedule(address: str, folder: Path) -> dict[str, Any]:
    """Two driver processes at one endpoint: the spacing of every call start the server saw."""
    stamps: list[tuple[float, str]] = []

    def handler(req: ServerRequest) -> Reply:
        stamps.append((time.monotonic(), str(req.body.get("model"))))
        return Reply(content="ok", delay=0.05)

    with OpenAICompatServer(handler=handler) as server:
        codes, outputs = run_drivers("tests.integration.ray_production", address,
                                     server.base_url, folder)  # fmt: skip
    times = sorted(t for t, _ in stamps)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    lines = [json.loads(o.splitlines()[-1]) for o, _ in outputs if o.strip()]
    starts = sorted(t for line in lines for t in line["starts"])
    start_gaps = [b - a for a, b in itertools.pairwise(starts)]
    return {
        "exit_codes": codes,
        "stderr_tail": [err[-500:] for _, err in outputs if err],
        "calls": len(times),
        "per_driver": {n: sum(m == n for _, m in stamps) for n in DRIVERS},
        "limit": RATE, "min_gap_s": min(gaps) if gaps else None,
        "most_in_a_second": _most_in_a_second(times),
        # as the workers saw them: the moment the limiter let each call start
        "starts": len(starts), "min_start_gap_s": min(start_gaps) if start_gaps else None,
        "most_starts_in_a_second": _most_in_a_second(starts),
        "gaps_under_interval": sorted(g for g in gaps if g < 1 / RATE)[:8],
        "observed_per_s": (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else None,
    }  # fmt: skip


def _measure(temp: Path, out: dict[str, Any]) -> None:
    with ray_cluster(temp / "ray", nodes=1) as address:
        out["schedule"] = schedule(address, temp)
        out["coalesce"] = coalesce(temp, address)
        out["joins"] = joins(temp, address)


if __name__ == "__main__":
    # drive() by its module name: the workers' copies of _Call and _starts share one _STARTS
    scenario_main("tests.integration.ray_production", "gtprod", _measure)
