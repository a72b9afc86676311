"""The run-folder lock around a command that writes ``--out`` and has no journal to take it.

``interventions`` and ``audit run`` lock their folder where the library opens its journal;
``judge validate``, ``judge run``, ``gate run`` and ``paths`` write reports (and the judge a
call cache) into ``--out`` with no journal, so the command holds the lock itself
(:mod:`groundtrace.analyzer._runlock`). With ``--estimate`` nothing is written and nothing is
locked.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

__all__ = ["holds_out_folder"]

P = ParamSpec("P")
R = TypeVar("R")


def holds_out_folder(func: Callable[P, R]) -> Callable[P, R]:
    """Run the command holding the lock of its ``out`` folder (keyword argument)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        out = kwargs.get("out")
        if not isinstance(out, Path) or kwargs.get("estimate"):
            return func(*args, **kwargs)
        from groundtrace.analyzer._runlock import RunFolderLock

        with RunFolderLock.acquire(out):
            return func(*args, **kwargs)

    return wrapper
