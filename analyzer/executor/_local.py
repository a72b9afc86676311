"""The local executor: this process, asyncio, a bounded number of units in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final, TypeVar

from ._stop import stop_on_signals
from ._types import OnResult, Stoppable, Work

__all__ = ["LocalExecutor"]

U = TypeVar("U")
R = TypeVar("R")


class LocalExecutor(Stoppable):
    """Runs units in the driver's event loop, at most ``concurrency`` at a time.

    Units start in input order; each result goes to ``on_result`` as soon as it arrives.

    Args:
        concurrency: units in flight (>= 1).
    """

    name: Final = "local"

    def __init__(self, concurrency: int = 4) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency

    def close(self) -> None:
        """Nothing to release (the same call as :meth:`RayExecutor.close`)."""

    async def map(
        self,
        work: Work[U, R],
        units: Sequence[U],
        *,
        on_result: OnResult[R] | None = None,
    ) -> list[R]:
        """``work(unit)`` for every unit, results in input order (see :class:`Executor`)."""
        self._stop = False
        self._reason = None
        results: dict[int, R] = {}
        pending = iter(range(len(units)))

        async def lane() -> None:
            for index in pending:
                if self._stop:
                    return
                result = await work(units[index])
                results[index] = result
                if on_result is not None:
                    on_result(index, result)
                self.check_budget()

        with stop_on_signals(self.request_stop) as taken, self.watching():
            lanes = [
                asyncio.ensure_future(lane()) for _ in range(min(self.concurrency, len(units)))
            ]
            try:
                await asyncio.gather(*lanes)
            except BaseException:
                for t in lanes:
                    t.cancel()
                await asyncio.gather(*lanes, return_exceptions=True)
                raise
        done = self.finish(results, len(units))  # RunStoppedError: the signal stopped it
        taken.pass_on()  # it ended whole: the host hears of the signal it took
        return done
