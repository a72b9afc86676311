"""Trace-model (τ) JSON lines as input: what ``traces convert`` and ``collect phoenix`` write.

A file is τ when its first non-blank line is a JSON object with a ``model_version`` key (an
OTLP export has ``resourceSpans`` or ``resourceLogs`` instead); every line of it is then one
:class:`~groundtrace.collectors.model.Trace`, decoded with the model's strict decoder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final

import orjson

from groundtrace.collectors.errors import InputError
from groundtrace.collectors.model import Trace

__all__ = ["is_model_line", "read_model_lines"]

_VERSION_KEY: Final = "model_version"
_OTLP_KEYS: Final = ("resourceSpans", "resourceLogs", "resource_spans", "resource_logs")


def is_model_line(line: bytes) -> bool:
    """Whether ``line`` is a serialised trace (a JSON object with ``model_version``)."""
    if _VERSION_KEY.encode() not in line:
        return False
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and _VERSION_KEY in obj and not any(k in obj for k in _OTLP_KEYS)


def read_model_lines(
    lines: Iterable[tuple[int, bytes]],
    error: Callable[[str, int, str | None], None],
    count: Callable[[], None],
) -> Iterator[Trace]:
    """The trace of each numbered non-blank line; a bad one goes to ``error`` (message, line,
    field) and the next is read."""
    for number, line in lines:
        if line.isspace():
            continue
        try:
            trace = Trace.from_json(line)
        except InputError as exc:
            error(f"not a trace-model line: {exc.reason}", number, exc.field)
            continue
        count()
        yield trace
