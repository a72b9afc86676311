"""A run's ledger of model calls by model: attempts made and tokens reported.

A ledger belongs to a run, never to the process: the driver
(:func:`~groundtrace.analyzer.run_analysis`) opens one per run and counts in it while the run's
work runs (:func:`counting`); every HTTP attempt of every
:class:`~groundtrace.analyzer.llm.ModelClient` made inside is entered in each ledger counting
there (a budget's own ledger inside a run's, say), so two runs in one process, one after the
other or side by side in one event loop, never count each other's calls. An attempt made
where no ledger counts is entered nowhere.

The ledgers counting are carried by a context variable, which asyncio copies into every task
and thread started inside: a cluster worker counts each unit in a fresh ledger and sends its
entries back with the result, and the driver adds them where it counts
(:func:`absorb_ledger`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

import msgspec

from ._types import CallResult, ChatResponse

__all__ = ["Usage", "UsageLedger", "absorb_ledger", "counting", "ledger", "record_call",
           "take_ledger"]  # fmt: skip


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Calls to one model and the tokens its responses reported.

    Attributes:
        calls: HTTP attempts (retries and failed attempts included).
        prompt_tokens: input tokens reported by completed calls.
        completion_tokens: output tokens reported by completed calls.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def plus(self, other: Usage) -> Usage:
        """The sum of two entries."""
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class UsageLedger:
    """The model calls of one run (or one budget), by model; thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def add(self, model: str, usage: Usage) -> None:
        """Enter ``usage`` of ``model``."""
        with self._lock:
            self._entries[model] = self._entries.get(model, Usage()).plus(usage)

    def entries(self) -> dict[str, Usage]:
        """The entries as they stand, by model."""
        with self._lock:
            return dict(self._entries)

    def calls(self) -> int:
        """HTTP attempts entered, every model."""
        with self._lock:
            return sum(u.calls for u in self._entries.values())


#: The ledgers counting in this context, outermost first.
_COUNTING: ContextVar[tuple[UsageLedger, ...]] = ContextVar("groundtrace_ledgers", default=())


@contextlib.contextmanager
def counting(into: UsageLedger) -> Iterator[UsageLedger]:
    """Within the block (and the tasks and threads it starts), calls are entered in ``into``
    as well as in the ledgers already counting."""
    outer = _COUNTING.get()
    token = _COUNTING.set(outer if into in outer else (*outer, into))
    try:
        yield into
    finally:
        _COUNTING.reset(token)


def _add(model: str, usage: Usage) -> None:
    for entered in _COUNTING.get():
        entered.add(model, usage)


def record_call(model: str, result: CallResult) -> None:
    """Enter one attempt at ``model`` and the tokens its response reported, in the ledgers
    counting here."""
    tokens = result.usage if isinstance(result, ChatResponse) else {}
    _add(
        model,
        Usage(
            calls=1,
            prompt_tokens=tokens.get("prompt_tokens", 0),
            completion_tokens=tokens.get("completion_tokens", 0),
        ),
    )


def ledger() -> dict[str, Usage]:
    """The entries of the innermost ledger counting here (empty where none counts)."""
    found = _COUNTING.get()
    return found[-1].entries() if found else {}


def take_ledger() -> dict[str, Usage]:
    """The entries of the innermost ledger counting here (a worker's unit, sent back with its
    result), which is then emptied."""
    found = _COUNTING.get()
    if not found:
        return {}
    inner = found[-1]
    with inner._lock:
        out = dict(inner._entries)
        inner._entries.clear()
    return out


def absorb_ledger(entries: dict[str, Usage]) -> None:
    """Add a worker's :func:`take_ledger` to the ledgers counting here."""
    for model, usage in entries.items():
        _add(model, usage)
