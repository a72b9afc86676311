"""One token bucket per endpoint, shared by every client of it: in this process, or on a
Ray cluster through one named actor that every worker of every driver asks for permits.

On a cluster the actor is named after the endpoint in the ``groundtrace`` namespace and
detached, so every map of a run, every worker and every driver connected to the cluster at
the same time share one bucket; it stays on the cluster (0 CPUs) until the cluster stops. Each
permit is spaced by the rate of the client asking for it (clients of one endpoint normally
share one ``--rate-limit``).

The bucket spaces calls at least ``1 / rate`` seconds apart (no burst), so over any window
the calls started stay within ``rate`` per second plus one. A 429 seen by any client pauses
the bucket until its ``Retry-After``: every client of the endpoint (every worker, on a
cluster) waits, and a permit granted before the pause but not yet used is taken again after it.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

__all__ = ["ACTOR_NAMESPACE", "ACTOR_PREFIX", "Bucket", "RateLimiter", "limiter_for"]

#: Names of the cluster's bucket actors start with this (one per endpoint).
ACTOR_PREFIX: Final = "groundtrace-rate-"
#: The Ray namespace of the bucket actors (shared by every driver of the cluster).
ACTOR_NAMESPACE: Final = "groundtrace"


class Bucket:
    """The bucket's arithmetic, on one clock (the process or the actor that holds it).

    Args:
        rate: permits per second (> 0).
        clock: monotonic seconds (tests pass a fake one).
    """

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 calls per second, got {rate}")
        self.interval = 1.0 / rate
        self.clock = clock
        self.next_slot = -float("inf")
        self.paused_until = -float("inf")

    def reserve(self, rate: float | None = None) -> tuple[float, float]:
        """Take the next permit: (seconds to wait for it, the slot it is for).

        ``rate``: permits per second from now on (default: as before).
        """
        if rate is not None:
            self.interval = 1.0 / rate
        now = self.clock()
        slot = max(now, self.next_slot, self.paused_until)
        self.next_slot = slot + self.interval
        return slot - now, slot

    def clear(self, slot: float) -> bool:
        """Whether a permit for ``slot`` still holds (no pause was set past it meanwhile)."""
        return self.paused_until <= slot

    def pause(self, seconds: float) -> None:
        """No permit starts before ``seconds`` from now (a 429's ``Retry-After``)."""
        self.paused_until = max(self.paused_until, self.clock() + seconds)


class _BucketActor:
    """The cluster's bucket for one endpoint (a named Ray actor)."""

    def __init__(self, rate: float) -> None:
        self.bucket = Bucket(rate)

    def reserve(self, rate: float) -> tuple[float, float]:
        return self.bucket.reserve(rate)

    def clear(self, slot: float) -> bool:
        return self.bucket.clear(slot)

    def pause(self, seconds: float) -> None:
        self.bucket.pause(seconds)


class RateLimiter:
    """Permits for one endpoint: from a :class:`Bucket` here or from the cluster's actor.

    Args:
        rate: permits per second this client asks for.
        bucket: a bucket in this process, or None with ``actor``.
        actor: the cluster's bucket actor handle.
    """

    def __init__(self, rate: float, bucket: Bucket | None = None, actor: Any = None) -> None:
        self.rate = rate
        self._bucket = bucket
        self._actor = actor

    async def _ask(self, method: str, *args: Any) -> Any:
        if self._bucket is not None:
            return getattr(self._bucket, method)(*args)
        ref = getattr(self._actor, method).remote(*args)
        return await asyncio.wrap_future(ref.future())

    async def acquire(self) -> None:
        """Wait for a permit (again after a pause set while waiting)."""
        while True:
            wait, slot = await self._ask("reserve", self.rate)
            if wait <= 0:
                return
            await asyncio.sleep(wait)
            if await self._ask("clear", slot):
                return

    async def pause(self, seconds: float) -> None:
        """Pause every client of this endpoint for ``seconds``."""
        await self._ask("pause", seconds)


_LOCAL: dict[str, Bucket] = {}
_LOCK = threading.Lock()


def _cluster() -> Any:
    """The ``ray`` module when this process is connected to a cluster, else None."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return ray


def actor_name(base_url: str) -> str:
    """The name of the cluster's bucket actor for ``base_url``."""
    digest = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]
    return ACTOR_PREFIX + digest


def limiter_for(base_url: str, rate: float) -> RateLimiter:
    """The limiter every client of ``base_url`` shares, asking for ``rate`` permits a second.

    Connected to a Ray cluster (a worker, or a driver running one), that is the cluster's
    named actor (created by the first client that asks, in any driver); otherwise a bucket
    of this process.
    """
    ray = _cluster()
    if ray is not None:
        named = ray.remote(_BucketActor).options(
            name=actor_name(base_url), namespace=ACTOR_NAMESPACE, get_if_exists=True,
            lifetime="detached", num_cpus=0,
        )  # fmt: skip
        return RateLimiter(rate, actor=named.remote(rate))
    with _LOCK:
        bucket = _LOCAL.setdefault(base_url.rstrip("/"), Bucket(rate))
    return RateLimiter(rate, bucket)
