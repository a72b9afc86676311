"""One schedule of call starts per endpoint, shared by every client of it: in this process, or
on a Ray cluster through one named actor that every worker of every driver asks for a start.

On a cluster the actor is named after the endpoint in the ``groundtrace`` namespace and
detached, so every map of a run, every worker and every driver connected to the cluster at
the same time share one schedule; it stays on the cluster (0 CPUs) until the cluster stops.
Each start is spaced by the rate of the client asking for it (clients of one endpoint
normally share one ``--rate-limit``).

The schedule hands out start times, each at least ``1 / rate`` after the one before, on a clock
every process of the machine shares (``time.time``; across machines, their clocks as
synchronised). The holder of the schedule keeps the asker until just before its start
(``lead`` seconds, so the answer arrives in time), the asker sleeps the rest and starts on
time; an asker that finds its start more than :data:`LATE` of an interval past when the answer
reaches it (a busy machine) does not start late, which would crowd the next start, but asks
for a new one, with a longer lead. So any two call starts are at least ``(1 - LATE) / rate``
apart, and any one-second window holds at most ``rate`` starts plus one.

A 429 seen by any client pauses the schedule until its ``Retry-After``: every client of the
endpoint (every worker, on a cluster) waits, and a start handed out before the pause that is
not ``lead`` seconds away yet is moved after it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "ACTOR_NAMESPACE",
    "ACTOR_PREFIX",
    "LATE",
    "Bucket",
    "RateLimiter",
    "hold",
    "limiter_for",
]

_log = logging.getLogger(__name__)

#: Names of the cluster's schedule actors start with this (one per endpoint).
ACTOR_PREFIX: Final = "groundtrace-schedule-"
#: The Ray namespace of the schedule actors (shared by every driver of the cluster).
ACTOR_NAMESPACE: Final = "groundtrace"
#: The fraction of an interval a start may come after its time; later, a new start is asked for.
LATE: Final = 0.1
#: Seconds before its start the schedule lets an asker go (doubled after each late start).
LEAD: Final = 0.02
MAX_LEAD: Final = 1.0


class Bucket:
    """The schedule's arithmetic, on one clock (the process or the actor that holds it).

    Args:
        rate: starts per second (> 0).
        clock: seconds on the clock the askers share (tests pass a fake one).
    """

    def __init__(self, rate: float, clock: Callable[[], float] = time.time) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 calls per second, got {rate}")
        self.interval = 1.0 / rate
        self.clock = clock
        self.next_slot = -float("inf")
        self.paused_until = -float("inf")

    def reserve(self, rate: float | None = None) -> tuple[float, float]:
        """Take the next start: (seconds until it, its time on :attr:`clock`).

        ``rate``: starts per second from now on (default: as before).
        """
        if rate is not None:
            self.interval = 1.0 / rate
        now = self.clock()
        slot = max(now, self.next_slot, self.paused_until)
        self.next_slot = slot + self.interval
        return slot - now, slot

    def clear(self, slot: float) -> bool:
        """Whether a start at ``slot`` still holds (no pause was set past it meanwhile)."""
        return self.paused_until <= slot

    def pause(self, seconds: float) -> None:
        """No start before ``seconds`` from now (a 429's ``Retry-After``)."""
        self.paused_until = max(self.paused_until, self.clock() + seconds)


async def hold(bucket: Bucket, rate: float, lead: float) -> float:
    """A start from ``bucket``, returned ``lead`` seconds before it (again after a pause)."""
    while True:
        wait, slot = bucket.reserve(rate)
        if wait > lead:
            await asyncio.sleep(wait - lead)
        if bucket.clear(slot):
            return slot


class _ScheduleActor:
    """The cluster's schedule for one endpoint (a named, async Ray actor)."""

    def __init__(self, rate: float) -> None:
        self.bucket = Bucket(rate)

    async def hold(self, rate: float, lead: float) -> float:
        return await hold(self.bucket, rate, lead)

    async def pause(self, seconds: float) -> None:
        self.bucket.pause(seconds)


class RateLimiter:
    """Starts for one endpoint: from a :class:`Bucket` here or from the cluster's actor.

    Args:
        rate: starts per second this client asks for.
        bucket: a bucket in this process, or None with ``actor``.
        actor: the cluster's schedule actor handle.
    """

    def __init__(self, rate: float, bucket: Bucket | None = None, actor: Any = None) -> None:
        self.rate = rate
        self.lead = LEAD
        self.late_starts = 0
        self._bucket = bucket
        self._actor = actor
        self._clock = bucket.clock if bucket is not None else time.time

    async def _ask(self, method: str, *args: Any) -> Any:
        if self._bucket is not None:
            if method == "hold":
                return await hold(self._bucket, *args)
            return getattr(self._bucket, method)(*args)
        ref = getattr(self._actor, method).remote(*args)
        return await asyncio.wrap_future(ref.future())

    async def acquire(self) -> None:
        """Wait for this call's start (a new one when this one came too late to keep)."""
        while True:
            slot = await self._ask("hold", self.rate, self.lead)
            wait = slot - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
            late = self._clock() - slot
            if late <= LATE / self.rate:
                return
            self.late_starts += 1
            self.lead = min(2 * self.lead, MAX_LEAD)
            _log.debug("start %.3fs late: asking for another, %.3fs ahead", late, self.lead)

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
    """The name of the cluster's schedule actor for ``base_url``."""
    digest = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]
    return ACTOR_PREFIX + digest


def limiter_for(base_url: str, rate: float) -> RateLimiter:
    """The limiter every client of ``base_url`` shares, asking for ``rate`` starts a second.

    Connected to a Ray cluster (a worker, or a driver running one), that is the cluster's
    named actor (created by the first client that asks, in any driver); otherwise a bucket
    of this process.
    """
    ray = _cluster()
    if ray is not None:
        named = ray.remote(_ScheduleActor).options(
            name=actor_name(base_url), namespace=ACTOR_NAMESPACE, get_if_exists=True,
            lifetime="detached", num_cpus=0,
        )  # fmt: skip
        return RateLimiter(rate, actor=named.remote(rate))
    with _LOCK:
        bucket = _LOCAL.setdefault(base_url.rstrip("/"), Bucket(rate, time.monotonic))
    return RateLimiter(rate, bucket)
