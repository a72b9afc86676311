"""The model calls a unit made on a cluster worker, carried back to the driver.

A worker's clients are copies (a :class:`~groundtrace.analyzer.llm.ModelClient` pickles as
its settings), and the ledgers counting in the driver are not counting in the worker: so the
executor runs each unit inside :meth:`WorkerCalls.running`, sends what it took back with the
result, and the driver's :meth:`WorkerCalls.absorb` adds it to the original clients' counters
and to the ledgers counting there (the run's, its budget's). The executor knows nothing of
model calls: it is handed a :class:`WorkerCalls` as its ``carry`` by the driver.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ._client import ClientCounts, absorb_counts, take_counts
from ._ledger import Usage, UsageLedger, absorb_ledger, counting

__all__ = ["WorkerCalls"]

#: What a worker sends back per unit: its clients' counters by token, its calls by model.
Taken = tuple[dict[str, ClientCounts], dict[str, Usage]]


class WorkerCalls:
    """Carries the model calls of each unit a cluster worker runs back to the driver (the
    executor's ``carry``); it holds no state, so it pickles to the workers as it is."""

    @contextlib.contextmanager
    def running(self) -> Iterator[Callable[[], Taken]]:
        """In the worker: the block one unit runs in; what it yields, called after the unit,
        takes the unit's calls (the clients' counters are reset)."""
        with counting(UsageLedger()) as usage:
            yield lambda: (take_counts(), usage.entries())

    def absorb(self, sent: Any) -> None:
        """In the driver: add a unit's :meth:`running` take to the original clients and to
        the ledgers counting here."""
        counts, usage = sent
        absorb_counts(counts)
        absorb_ledger(usage)
