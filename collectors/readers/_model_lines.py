"""Trace-model (τ) JSON lines as input: what ``traces convert`` and ``collect phoenix`` write.

A file is τ when its first non-blank line is a JSON object with a ``model_version`` key (an
OTLP export has ``resourceSpans`` or ``resourceLogs`` instead); every line of it is then one
:class:`~groundtrace.collectors.model.Trace`, decoded with the model's strict decoder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final

import msgspec
import orjson

from groundtrace.collectors.errors import InputError
from groundtrace.collectors.model import Finding, FindingKind, Trace

from ._repair import REPLACED, parse_pieces, path_text

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
        pieces = parse_pieces(line)  # invalid text in a value: the line is still a trace
        obj = pieces[0].value if len(pieces) == 1 else None
    return isinstance(obj, dict) and _VERSION_KEY in obj and not any(k in obj for k in _OTLP_KEYS)


def read_model_lines(
    lines: Iterable[tuple[int, bytes]],
    error: Callable[[str, int, str | None], None],
    count: Callable[[], None],
    source: str,
) -> Iterator[Trace]:
    """The trace of each numbered non-blank line; a bad one goes to ``error`` (message, line,
    field) and the next is read.

    A string with invalid UTF-8 or a lone surrogate is read with U+FFFD in their place: the
    trace is kept with a ``malformed_field`` finding naming ``source``, the line and the
    field, and the replacement is reported to ``error`` too.
    """
    for number, line in lines:
        if line.isspace():
            continue
        try:
            trace = Trace.from_json(line)
        except InputError as exc:
            try:
                trace = _repaired(line, f"{source}:{number}", exc, error, number)
            except InputError as again:
                error(f"not a trace-model line: {again.reason}", number, again.field)
                continue
        count()
        yield trace


def _repaired(
    line: bytes,
    location: str,
    failure: InputError,
    error: Callable[[str, int, str | None], None],
    number: int,
) -> Trace:
    """The trace of a line with invalid text, each replaced string a finding and an error.

    Raises:
        InputError: ``failure`` (nothing was replaced), or why the repaired line is no trace.
    """
    pieces = parse_pieces(line)
    if len(pieces) != 1 or not pieces[0].repaired:
        raise failure
    value = pieces[0].value
    trace = Trace.from_json(orjson.dumps(value))
    findings = []
    for path in pieces[0].repaired:
        where = path_text(path)
        step = value["steps"][path[1]] if path[:1] == ("steps",) and len(path) > 1 else None
        span_id = step.get("span_id") if isinstance(step, dict) else None
        message = f"{location}: {where}: {REPLACED}"
        findings.append(Finding(FindingKind.MALFORMED_FIELD, message, span_id, location, where))
        error(REPLACED, number, where)
    return msgspec.structs.replace(trace, findings=(*trace.findings, *findings))
