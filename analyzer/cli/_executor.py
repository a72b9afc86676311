"""``--executor`` / ``--ray-address`` / ``--ray-workers``: the options every unit-running
command shares (:class:`ExecutorOptions`), and the executor they ask for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from groundtrace.analyzer.executor import LocalExecutor, RayExecutor
    from groundtrace.analyzer.llm import Budget

__all__ = ["ExecutorName", "ExecutorOptions"]


class ExecutorName(StrEnum):
    """What runs the work units."""

    LOCAL = "local"
    RAY = "ray"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutorOptions:
    """The executor options of a command (an option group, see :mod:`._options`).

    Attributes:
        executor: ``--executor``: local (this process) or ray.
        ray_address: ``--ray-address``: the Ray cluster (``None``: found as Ray finds it).
        ray_workers: ``--ray-workers``: Ray worker actors.
    """

    executor: Annotated[
        ExecutorName,
        typer.Option(
            help="local: this process; ray: a Ray cluster (pip install 'groundtrace[ray]')."
        ),
    ] = ExecutorName.LOCAL
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster address (default: RAY_ADDRESS, else the cluster `ray start` left "
            "running here, else a private one)."
        ),
    ] = None
    ray_workers: Annotated[
        int, typer.Option(help="Ray worker actors (each runs --concurrency units at a time).")
    ] = 2

    @contextmanager
    def open(
        self, concurrency: int, budget: Budget | None = None
    ) -> Iterator[LocalExecutor | RayExecutor]:
        """The executor the options ask for, running ``concurrency`` units at a time (per Ray
        worker) under ``budget``'s ceilings; closed on exit.

        Raises:
            ConfigError: ``--ray-address`` without ``--executor ray``.
        """
        from groundtrace.analyzer.executor import RayExecutor, executor_for

        executor = executor_for(
            self.executor.value,
            concurrency=concurrency,
            address=self.ray_address,
            workers=self.ray_workers,
        )
        executor.budget = budget
        if isinstance(executor, RayExecutor):  # the workers' model calls, counted here
            from groundtrace.analyzer.llm import WorkerCalls

            executor.carry = WorkerCalls()
        try:
            yield executor
        finally:
            executor.close()
