"""The process's ledger of model calls by model: attempts made and tokens reported.

Every HTTP attempt of every :class:`~groundtrace.analyzer.llm.ModelClient` in the process is
entered here. A cluster worker sends its entries back with each result
(:func:`take_ledger`) and the driver adds them to its own (:func:`absorb_ledger`), so the
driver's ledger covers the whole run: what ``--max-calls`` / ``--max-cost`` are checked against.
"""

from __future__ import annotations

import threading

import msgspec

from ._types import CallResult, ChatResponse

__all__ = ["Usage", "absorb_ledger", "ledger", "record_call", "take_ledger"]


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


_LEDGER: dict[str, Usage] = {}
_LOCK = threading.Lock()


def _add(model: str, usage: Usage) -> None:
    with _LOCK:
        _LEDGER[model] = _LEDGER.get(model, Usage()).plus(usage)


def record_call(model: str, result: CallResult) -> None:
    """Enter one attempt at ``model`` and the tokens its response reported."""
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
    """The entries as they stand, by model."""
    with _LOCK:
        return dict(_LEDGER)


def take_ledger() -> dict[str, Usage]:
    """The entries since the last call (a worker's, sent back with a result), then reset."""
    with _LOCK:
        out = dict(_LEDGER)
        _LEDGER.clear()
    return out


def absorb_ledger(entries: dict[str, Usage]) -> None:
    """Add a worker's :func:`take_ledger` to this process's ledger."""
    for model, usage in entries.items():
        _add(model, usage)
