"""One seam for the analyses' work units: the local executor or a Ray cluster runs them.

Interventions (replay units), judge runs (one case each) and the audit (answers, then pairs)
hand their units to an :class:`Executor` and never learn which one runs them. Results come
back to the driver, which journals each one as it arrives; a unit's randomness is derived from
its content key (:func:`unit_seed`), so the results do not depend on scheduling or on the
number of workers. SIGTERM/SIGINT stop the run gracefully: no new unit starts, the in-flight
ones finish and are journaled, then ``RunStoppedError`` is raised (a re-run resumes).

Usage (inside an async function, a notebook cell or a service: the library starts no event
loop of its own; an analysis gets its executor from the driver, ``context.map``)::

    from groundtrace.analyzer.executor import executor_for

    async def work(unit: int) -> int:  # one unit: a replay, a judged case, an answer...
        return unit * unit

    async def main() -> list[int]:
        executor = executor_for("local", concurrency=4)  # or "ray", address="auto"
        try:
            # on_result runs on the driver as each result arrives: where it is journaled
            return await executor.map(work, [1, 2, 3], on_result=lambda i, r: print(i, r))
        finally:
            executor.close()

    print(await main())  # [1, 4, 9], in the units' order
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._journal import UnitJournal
from ._journaled import Spread, run_journaled
from ._local import LocalExecutor
from ._ray import RayExecutor
from ._types import Executor, unit_seed

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "Spread",
    "UnitJournal",
    "executor_for",
    "run_journaled",
    "unit_seed",
]

#: Type aliases of :meth:`Executor.map` and the journal's row, no longer public (0.2.0):
#: importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "OnResult": f"{__name__}._types.OnResult",
        "UnitRecord": f"{__name__}._journal.UnitRecord",
        "Work": f"{__name__}._types.Work",
    },
    since="0.2.0",
    remove_in="0.3.0",
)


def executor_for(
    name: str, *, concurrency: int, address: str | None = None, workers: int = 2
) -> LocalExecutor | RayExecutor:
    """The executor ``--executor NAME`` asks for.

    Args:
        name: ``local`` or ``ray``.
        concurrency: units in flight (per worker with Ray).
        address: the Ray cluster (``None``: ``RAY_ADDRESS``, else the one ``ray start`` left
            running on this machine, else a private local one).
        workers: Ray worker actors.

    Raises:
        ConfigError: an unknown name, or ``--ray-address`` without ``--executor ray``.
    """
    from groundtrace.analyzer.errors import ConfigError

    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray", field="--ray-address")
        return LocalExecutor(concurrency)
    if name == "ray":
        return RayExecutor(address=address, workers=workers, concurrency=concurrency)
    raise ConfigError(f"unknown executor {name!r} (local or ray)", field="--executor")
