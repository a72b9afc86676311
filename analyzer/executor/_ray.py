"""The Ray executor: the same units on a Ray cluster's workers, results journaled by the driver.

Each worker is an async Ray actor; the executor starts its workers once and every ``map`` of
the run reuses them (a Ray actor takes seconds to start). A ``map`` puts its work in the object
store once; each worker loads it on its first unit of that ``map`` (again after a restart) and
runs up to ``concurrency`` units at a time, the same bound the local executor applies in one
process. The driver keeps ``workers * concurrency`` units in flight, hands each result to
``on_result`` as it arrives (the driver is the one journal writer) and keeps the first result
per unit: a worker that dies is restarted by Ray and its in-flight units are retried there
(up to :data:`RETRIES` times, then the run fails with ``ExecutorError``), and a retried unit
can never produce a second result. An exception the work raises reaches the driver as it was
raised. What the executor's ``carry`` takes of each unit travels back with its result and is
absorbed in the driver: the driver's :class:`~groundtrace.analyzer.llm.WorkerCalls` carries the
workers' model calls to the run's ledger and the original clients' counters, so a run's
recorded counts cover the whole cluster.

Without an address the executor joins the cluster ``RAY_ADDRESS`` names (``ray job submit``
sets it), else the one ``ray start`` left running on this machine, and starts a private
single-machine instance only when there is none; it says on stderr which one it used.

When a ``map`` ends each worker closes its work (``aclose`` when it has one: flush the traces it
recorded); :meth:`RayExecutor.close` stops the workers. Workers must reach the files the work
opens (the call cache, the trace folder) at the same path: true for a cluster on one machine or
on shared storage.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import uuid
from collections.abc import Sequence
from typing import Any, Final, TypeVar

from groundtrace.analyzer.errors import ConfigError, ExecutorError, MissingExtraError

from ._stop import stop_on_signals
from ._types import Carry, OnResult, Stoppable, Work

__all__ = ["RayExecutor"]

U = TypeVar("U")
R = TypeVar("R")

#: Object store of a cluster this executor starts itself (bytes); units are small.
LOCAL_OBJECT_STORE: Final = 100 * 1024 * 1024
#: Seconds to wait for a cluster's port to accept a connection before holding it unreachable.
PROBE: Final = 3.0
#: Seconds a worker gets to close its work (flush traces) before it is stopped.
CLOSE_TIMEOUT: Final = 30.0
#: Times a dead worker is restarted, and a unit it was running retried, before the run fails.
RETRIES: Final = 4


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "ray") from None
    return ray


def _say(message: str) -> None:
    print(f"groundtrace: {message}", file=sys.stderr, flush=True)


def _find_cluster(address: str | None) -> tuple[str | None, str]:
    """The cluster to join (None: start a private instance) and how it was found.

    ``address`` (``--ray-address``) first, then ``RAY_ADDRESS`` (set by ``ray job submit``),
    then the address file ``ray start`` leaves on this machine: Ray's own order. An address
    that names no listening port fails at once (``ray.init`` would wait for minutes); a
    stale address file (its cluster stopped without ``ray stop``) is passed over.

    Raises:
        ConfigError: ``--ray-address`` or ``RAY_ADDRESS`` names a port nothing listens on.
    """
    for given, source in (
        (address, "--ray-address"),
        (os.environ.get("RAY_ADDRESS"), "RAY_ADDRESS"),
    ):
        if given:
            if given == "local":
                return None, f"{source}=local"
            if not _listening(given):
                raise ConfigError(
                    f"cannot reach the Ray cluster {given} (from {source}): nothing accepts "
                    "connections there",
                    field="--ray-address",
                )
            return given, f"from {source}"
    from ray._private.utils import read_ray_address

    left = read_ray_address()  # what `ray start` wrote ($RAY_TMPDIR/ray/ray_current_cluster)
    if not left:
        return None, "no RAY_ADDRESS and no cluster left by `ray start`"
    if not _listening(left):
        return None, f"the cluster {left} that `ray start` left is not reachable"
    return left, "the one `ray start` left on this machine"


def _listening(address: str) -> bool:
    """Whether ``host:port`` accepts a TCP connection (True for other forms: ``auto``, ``ray://``)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return True
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=PROBE):
            return True
    except OSError:
        return False


def _unwrap(ray: Any, future: asyncio.Future[Any]) -> Any:
    """A worker's reply; the work's own exception as it was raised; Ray's failures mapped."""
    try:
        return future.result()
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, Exception) and not isinstance(cause, ray.exceptions.RayError):
            raise cause from None
        raise ExecutorError(f"a unit failed on the cluster: {exc}") from None
    except ray.exceptions.RayError as exc:
        raise ExecutorError(f"the cluster could not run a unit: {exc}") from None


class _Worker:
    """The actor body: the work of the current ``map``, units run as they come."""

    def __init__(self) -> None:
        self.work: Work[Any, Any] | None = None
        self.carry: Carry | None = None
        self.token: str | None = None
        self._loading: asyncio.Lock | None = None

    async def run(self, token: str, holder: list[Any], unit: Any) -> tuple[Any, Any]:
        """``work(unit)`` and what the carry took of it; the work and the carry
        (``holder[0]``, an object ref) are loaded once per map."""
        if self.token != token:
            self._loading = self._loading or asyncio.Lock()
            async with self._loading:
                if self.token != token:
                    self.work, self.carry = await holder[0]
                    self.token = token
        assert self.work is not None
        if self.carry is None:
            return await self.work(unit), None
        with self.carry.running() as taken:  # e.g. this unit's model calls, sent back with it
            result = await self.work(unit)
        return result, taken()

    async def close(self, token: str) -> None:
        """Close the work of map ``token`` (when it has ``aclose``) and drop it."""
        if self.token == token and self.work is not None:
            closer = getattr(self.work, "aclose", None)
            if closer is not None:
                await closer()
        self.work = None
        self.carry = None
        self.token = None

    def pid(self) -> int:
        return os.getpid()


class RayExecutor(Stoppable):
    """Runs units on a Ray cluster (``groundtrace[ray]``).

    Args:
        address: the cluster (``ray start --head`` prints it; ``auto`` finds a local one);
            ``None``: the cluster ``RAY_ADDRESS`` names (``ray job submit`` sets it), else the
            one ``ray start`` left running on this machine, else a private single-machine
            instance started for this process. Which one is said on stderr.
        workers: worker actors.
        concurrency: units in flight per worker.
        local_cpus: CPUs of the private cluster (``address=None`` only).
        carry: what each unit sends back besides its result, absorbed in the driver
            (``None``: nothing; the analysis driver gives a
            :class:`~groundtrace.analyzer.llm.WorkerCalls`, so the workers' model calls are
            counted in the run).
    """

    name: Final = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int = 2,
        concurrency: int = 4,
        local_cpus: int = 2,
        carry: Carry | None = None,
    ) -> None:
        if workers < 1 or concurrency < 1:
            raise ValueError(f"workers and concurrency must be >= 1, got {workers}, {concurrency}")
        self.address = address
        self.workers = workers
        self.concurrency = concurrency
        self.local_cpus = local_cpus
        self.carry = carry
        self._started = False
        self.actors: list[Any] = []

    def _connect(self) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            address, found_by = _find_cluster(self.address)
            try:
                if address is None:
                    ray.init(
                        num_cpus=self.local_cpus, include_dashboard=False,
                        object_store_memory=LOCAL_OBJECT_STORE, log_to_driver=False,
                    )  # fmt: skip
                    _say(f"started a private Ray instance on this machine ({found_by})")
                else:
                    ray.init(address=address, log_to_driver=False)
                    _say(f"joined the Ray cluster at {address} ({found_by})")
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"cannot reach the Ray cluster {address or '(local)'}: {exc}",
                    field="--ray-address",
                ) from None
            self._started = True
        return ray

    async def map(
        self,
        work: Work[U, R],
        units: Sequence[U],
        *,
        on_result: OnResult[R] | None = None,
    ) -> list[R]:
        """``work(unit)`` for every unit on the cluster, results in input order."""
        self._stop = False
        self._reason = None
        if not units:
            return []
        ray = self._connect()
        if not self.actors:
            actor_class = ray.remote(_Worker).options(
                max_concurrency=self.concurrency, max_restarts=RETRIES, max_task_retries=RETRIES,
                num_cpus=0, scheduling_strategy="SPREAD",
            )  # fmt: skip
            self.actors = [actor_class.remote() for _ in range(self.workers)]
        token = uuid.uuid4().hex
        carry = self.carry
        holder = [ray.put((work, carry))]  # in a list: each worker loads it, once per map
        results: dict[int, R] = {}
        inflight: dict[asyncio.Future[Any], tuple[int, int]] = {}
        load = [0] * self.workers
        pending = iter(range(len(units)))
        cap = self.workers * self.concurrency
        exhausted = False
        try:
            with stop_on_signals(self.request_stop) as taken, self.watching():
                while True:
                    while not (self._stop or exhausted) and len(inflight) < cap:
                        index = next(pending, None)
                        if index is None:
                            exhausted = True
                            break
                        lane = load.index(min(load))
                        ref = self.actors[lane].run.remote(token, holder, units[index])
                        inflight[asyncio.wrap_future(ref.future())] = (index, lane)
                        load[lane] += 1
                    if not inflight:
                        break
                    done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                    for future in done:
                        index, lane = inflight.pop(future)
                        load[lane] -= 1
                        result, sent = _unwrap(ray, future)
                        if carry is not None:
                            carry.absorb(sent)
                        if index not in results:
                            results[index] = result
                            if on_result is not None:
                                on_result(index, result)
                        self.check_budget()
        finally:
            for future in inflight:
                future.cancel()
            closing = [asyncio.wrap_future(a.close.remote(token).future()) for a in self.actors]
            await asyncio.wait(closing, timeout=CLOSE_TIMEOUT)  # flush the workers' traces
        whole = self.finish(results, len(units))  # RunStoppedError: the signal stopped it
        taken.pass_on()  # it ended whole: the host hears of the signal it took
        return whole

    def close(self) -> None:
        """Stop the workers; disconnect from the cluster (stop it if this executor started it)."""
        if self.actors:
            ray = _ray()
            if ray.is_initialized():
                for actor in self.actors:
                    ray.kill(actor)
            self.actors = []
        if self._started:
            _ray().shutdown()
            self._started = False
