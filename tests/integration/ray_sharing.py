"""What a Ray cluster shares across maps and drivers: the workers of a run, an endpoint's bucket.

Run inside a private network namespace, like :mod:`tests.integration.ray_scenario` (whose
cluster it starts)::

    unshare -n sh -c 'ip link set lo up && python -m tests.integration.ray_sharing'

It measures: two ``map`` calls of one executor run on the same worker processes (and how long
each took); two drivers (separate processes, one worker each) calling one endpoint at a shared
``rate_limit`` stay within it together, and a 429 answered to one of them pauses both until
its Retry-After. It prints one JSON line.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.analyzer.executor import RayExecutor
from groundtrace.analyzer.llm import ChatRequest, ModelClient, RetryPolicy
from tests.integration.ray_scenario import (
    DRIVERS,
    driver_ready,
    ray_cluster,
    run_drivers,
    scenario_main,
)
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

#: The shared rate (calls/s), calls per driver, the 429's Retry-After (s).
RATE = 4.0
CALLS = 8
RETRY_AFTER = 1.0


async def _pid(_: int) -> int:
    return os.getpid()


def reuse_across_maps(address: str) -> dict[str, Any]:
    """Two maps of one executor: the same worker processes, and each map's seconds."""
    executor = RayExecutor(address=address, workers=2, concurrency=2)
    try:
        seconds: list[float] = []
        pids: list[list[int]] = []
        for _ in range(2):
            started = time.monotonic()
            pids.append(sorted(set(asyncio.run(executor.map(_pid, list(range(8)))))))
            seconds.append(round(time.monotonic() - started, 3))
    finally:
        executor.close()
    return {"pids": pids, "seconds": seconds}


@dataclass(frozen=True)
class _Call:
    """One rate-limited call of the driver named ``name`` (pickles for a worker)."""

    client: ModelClient
    name: str

    async def __call__(self, i: int) -> bool:
        message = {"role": "user", "content": f"{self.name} call {i}"}
        result = await self.client.complete(ChatRequest(model=self.name, messages=(message,)))
        return result.ok


def drive(address: str, url: str, name: str, folder: Path) -> None:
    """One driver: ready with the other one, then its calls."""
    executor = RayExecutor(address=address, workers=1, concurrency=2)
    client = ModelClient(url, concurrency=2, timeout=60.0, rate_limit=RATE,
                         retry=RetryPolicy(seed=1, max_attempts=4))  # fmt: skip
    try:
        driver_ready(executor, folder, name)
        ok = asyncio.run(executor.map(_Call(client, name), list(range(CALLS))))
    finally:
        executor.close()
    print(json.dumps({"driver": name, "ok": sum(ok)}))


def two_drivers(address: str, folder: Path) -> dict[str, Any]:
    """Two driver processes at one endpoint: the rate and a 429's pause hold across both."""
    stamps: list[tuple[float, str]] = []
    limited: list[float] = []

    def handler(req: ServerRequest) -> Reply:
        stamps.append((time.monotonic(), str(req.body.get("model"))))
        if len(stamps) == 4:  # one 429 to one driver: both must wait out its Retry-After
            limited.append(stamps[-1][0])
            return Reply(status=429, retry_after=RETRY_AFTER)
        return Reply(content="ok")

    with OpenAICompatServer(handler=handler) as server:
        codes, outputs = run_drivers("tests.integration.ray_sharing", address, server.base_url,
                                     folder)  # fmt: skip
    times = [t for t, _ in stamps]
    after = {name: min((t - limited[0] for t, n in stamps if n == name and t > limited[0]),
                       default=None) for name in DRIVERS} if limited else {}  # fmt: skip
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return {
        "exit_codes": codes,
        "stderr_tail": [err[-500:] for _, err in outputs if err],
        "calls": len(stamps), "per_driver": {n: sum(m == n for _, m in stamps) for n in after},
        "limit": RATE, "retry_after": RETRY_AFTER,
        "observed_per_s": (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else None,
        "min_gap_s": min(gaps) if gaps else None,
        "first_after_429_s": after,
    }  # fmt: skip


def _measure(temp: Path, out: dict[str, Any]) -> None:
    with ray_cluster(temp) as address:
        out["reuse"] = reuse_across_maps(address)
        out["drivers"] = two_drivers(address, temp)


if __name__ == "__main__":
    scenario_main("tests.integration.ray_sharing", "gtshare", _measure)
