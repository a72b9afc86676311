"""What every executor provides, and the seed of a unit derived from its content key."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from groundtrace.analyzer._seeds import derived_seed
from groundtrace.analyzer.errors import BudgetReachedError, RunStoppedError

__all__ = ["Carry", "Executor", "OnResult", "StopCondition", "Stoppable", "Work", "unit_seed"]

U = TypeVar("U")
R = TypeVar("R")

#: One unit of work: an async callable, picklable when a cluster runs it (module-level
#: functions and objects whose state pickles; a :class:`~groundtrace.analyzer.llm.ModelClient`
#: pickles as its settings and reopens its cache where it is unpickled).
Work = Callable[[U], Awaitable[R]]
#: Called in the driver with (unit index, result) as each result arrives, once per unit.
OnResult = Callable[[int, R], None]


class Executor(Protocol):
    """Runs independent units and hands their results back to the driver.

    The analyses call :meth:`map` and never learn what runs the units: the local executor
    (this process, bounded concurrency) or the Ray executor (a cluster's workers).
    """

    @property
    def name(self) -> str:
        """``local`` or ``ray``."""

    async def map(
        self,
        work: Work[U, R],
        units: Sequence[U],
        *,
        on_result: OnResult[R] | None = None,
    ) -> list[R]:
        """``work(unit)`` for every unit; results in input order.

        ``on_result`` runs in the driver as each result arrives (journal it there: the
        driver is the one writer). After a stop request no new unit starts, the in-flight
        ones finish and reach ``on_result``, then ``RunStoppedError`` is raised.
        """

    def request_stop(self) -> None:
        """Stop issuing units (in-flight ones finish); :meth:`map` then raises."""

    def close(self) -> None:
        """Release the executor's resources (a cluster connection)."""


def unit_seed(base: int, key: str) -> int:
    """A 63-bit seed for the unit with content key ``key`` under the run seed ``base``.

    It depends on nothing but the two arguments, so a unit draws the same numbers whichever
    worker runs it, in whatever order.
    """
    return derived_seed(base, key)


class Carry(Protocol):
    """What a unit run in another process (a cluster worker) sends back besides its result,
    for the driver to add to its own state: the driver hands the Ray executor a
    :class:`~groundtrace.analyzer.llm.WorkerCalls`, so the model calls made on the workers
    reach the run's ledger and the original clients' counters. It is pickled to the workers
    once per ``map``; the executor itself knows nothing of what is carried."""

    def running(self) -> AbstractContextManager[Callable[[], Any]]:
        """In the worker: the block one unit runs in; what it yields, called after the unit,
        returns what to send back (picklable)."""

    def absorb(self, sent: Any) -> None:
        """In the driver: add what a unit's worker sent back."""


class StopCondition(Protocol):
    """When a run should stop issuing units: a ceiling (a
    :class:`~groundtrace.analyzer.llm.Budget`) or anything with the same two methods."""

    def reached(self) -> str | None:
        """Why the run must stop, in words; ``None`` while it may go on."""

    def watching(self) -> AbstractContextManager[None]:
        """The block in which the units run (a budget counts the calls made there)."""


class Stoppable:
    """The stop request both executors share, and the end of a run it decides.

    Attributes:
        stop_when: checked in the driver after each result (None: never); when it is
            reached the run stops like SIGTERM stops it, and ``map`` raises
            ``BudgetReachedError`` naming the reason.
    """

    _stop: bool = False
    _reason: str | None = None
    stop_when: StopCondition | None = None

    @property
    def budget(self) -> StopCondition | None:
        """The stop condition under its former name (``executor.budget = Budget(...)``)."""
        return self.stop_when

    @budget.setter
    def budget(self, value: StopCondition | None) -> None:
        self.stop_when = value

    def request_stop(self) -> None:
        """No new unit starts; the in-flight ones finish, then ``map`` raises."""
        self._stop = True

    def watching(self) -> AbstractContextManager[None]:
        """The block ``map`` runs its units in (the stop condition's, else nothing)."""
        if self.stop_when is None:
            return contextlib.nullcontext()
        return self.stop_when.watching()

    def check_budget(self) -> None:
        """Stop the run when the stop condition is reached (called after each result)."""
        if self.stop_when is not None and self._reason is None:
            self._reason = self.stop_when.reached()
            if self._reason is not None:
                self.request_stop()

    def finish(self, results: dict[int, R], n: int) -> list[R]:
        """The results of units ``0..n-1`` in input order.

        Raises:
            BudgetReachedError: some are missing: the budget stopped the run.
            RunStoppedError: some are missing: a signal stopped the run.
        """
        if len(results) < n:
            if self._reason is not None:
                raise BudgetReachedError(len(results), n, self._reason)
            raise RunStoppedError(len(results), n)
        return [results[i] for i in range(n)]
