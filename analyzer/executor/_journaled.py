"""Units through an executor with a journal in front: resumed units are not run again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from ._journal import UnitJournal
from ._types import Executor, Work

__all__ = ["Spread", "run_journaled"]

U = TypeVar("U")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Spread(Generic[R]):
    """``fn(*unit)``: a unit that is a tuple of arguments (picklable when ``fn`` is)."""

    fn: Callable[..., Awaitable[R]]

    async def __call__(self, unit: tuple[Any, ...]) -> R:
        return await self.fn(*unit)

    async def aclose(self) -> None:
        """Close ``fn`` (or the object of a bound method) when it has ``aclose``."""
        owner = getattr(self.fn, "__self__", self.fn)
        closer = getattr(owner, "aclose", None)
        if closer is not None:
            await closer()


async def run_journaled(
    executor: Executor,
    work: Work[U, R],
    units: Sequence[U],
    keys: Sequence[str],
    *,
    journal: UnitJournal | None,
    kind: type[Any],
    keep: Callable[[R], bool] = lambda _: True,
    on_done: Callable[[int, int], None] | None = None,
) -> list[R]:
    """``work(unit)`` for the units ``journal`` does not hold yet; results in input order.

    Each new result is journaled under its key as it arrives (in the driver): as completed
    when ``keep`` accepts it, else as a failure (a failed call worth retrying), which a re-run
    tries again.

    Args:
        executor: what runs the units.
        work: the unit's work.
        units: the units.
        keys: each unit's content key (same length as ``units``).
        journal: where results are kept (``None``: nothing is kept).
        kind: the type journaled results decode as (a kept result is one).
        keep: which results are completed units (the others are journaled as failures).
        on_done: called with (done, total) as results arrive (journaled ones count first).
    """
    found: dict[int, R] = {}
    if journal is not None:
        for i, key in enumerate(keys):
            prior = journal.get(key, kind)
            if prior is not None:
                found[i] = cast(R, prior)
    todo = [i for i in range(len(units)) if i not in found]
    done = len(found)
    if on_done is not None and found:
        on_done(done, len(units))

    def arrived(j: int, result: R) -> None:
        nonlocal done
        if journal is not None:
            journal.record(keys[todo[j]], result, ok=keep(result))
        done += 1
        if on_done is not None:
            on_done(done, len(units))

    fresh = await executor.map(work, [units[i] for i in todo], on_result=arrived)
    found.update(zip(todo, fresh, strict=True))
    return [found[i] for i in range(len(units))]
