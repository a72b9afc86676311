"""``--executor`` / ``--ray-address`` / ``--ray-workers``: the options every unit-running
command shares, and the executor they ask for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from groundtrace.analyzer.executor import LocalExecutor, RayExecutor
    from groundtrace.analyzer.llm import Budget

__all__ = ["ExecutorName", "ExecutorOpt", "RayAddressOpt", "RayWorkersOpt", "open_executor"]


class ExecutorName(StrEnum):
    """What runs the work units."""

    LOCAL = "local"
    RAY = "ray"


ExecutorOpt = Annotated[
    ExecutorName,
    typer.Option(help="local: this process; ray: a Ray cluster (pip install 'groundtrace[ray]')."),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster address (default: RAY_ADDRESS, else the cluster `ray start` left "
        "running here, else a private one)."
    ),
]
RayWorkersOpt = Annotated[
    int, typer.Option(help="Ray worker actors (each runs --concurrency units at a time).")
]


@contextmanager
def open_executor(
    name: ExecutorName,
    address: str | None,
    workers: int,
    concurrency: int,
    budget: Budget | None = None,
) -> Iterator[LocalExecutor | RayExecutor]:
    """The executor the options ask for (with ``budget``'s ceilings), closed on exit."""
    from groundtrace.analyzer.executor import executor_for

    executor = executor_for(name.value, concurrency=concurrency, address=address, workers=workers)
    executor.budget = budget
    try:
        yield executor
    finally:
        executor.close()
