"""Salvage of the JSON lines the decoders reject: invalid text and torn writes.

Only a line that the fast decoders (msgspec, orjson) refuse comes here, so clean input never
pays for it. Two kinds of damage that real processes leave in trace files are repaired,
value by value and export by export, so that one bad value or one torn write never costs
the rest of its line:

* **invalid text**: an invalid UTF-8 byte, or a lone surrogate escape (``"\\ud800"``), in a
  string. The line is parsed again with each invalid byte kept as a surrogate
  (``surrogateescape``); every string holding a surrogate becomes text with U+FFFD in
  their place, and its JSON path is returned for the caller to report (file, line, field).
* **torn writes**: an export cut short (a process killed mid-write), possibly glued to the
  next run's first export on the same physical line. With ``starts`` given, the line is
  cut at each top-level export start (``{"resourceSpans"`` / ``{"resourceLogs"``: those
  bytes cannot occur inside a string, where quotes are escaped); every piece that parses
  is kept and every one that does not is returned as a fragment with its reason.

Nothing more is accepted than on the fast path: ``NaN``/``Infinity`` literals and numbers
beyond a double are refused, and integers beyond 64 bits become floats, as orjson reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from groundtrace.collectors.spans import BadField

__all__ = [
    "EXPORT_START",
    "REPLACED",
    "JsonPath",
    "Piece",
    "otlp_notes",
    "parse_pieces",
    "path_text",
]

#: A JSON path as its keys and indexes.
JsonPath = tuple[str | int, ...]

#: Where an OTLP/JSON export object starts (its first key: ``resourceSpans``/``resourceLogs``).
EXPORT_START: Final = re.compile(r'\{[ \t\r\n]*"resource(?:Spans|Logs)"')
REPLACED: Final = "invalid UTF-8 or a lone surrogate replaced with U+FFFD"
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_SPACE: Final = re.compile(r"[ \t\r\n]*")
_INT64: Final = (-(2**63), 2**64 - 1)  # orjson reads integers in this range exactly
#: The envelope keys under which one owner (span, log record, scope, resource) sits.
_OWNERS: Final = (
    ("spans", "logRecords"),
    ("scopeSpans", "scopeLogs"),
    ("resourceSpans", "resourceLogs"),
)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is infinity when parsed as a double")
    return value


def _int(text: str) -> int | float:
    value = int(text)
    return value if _INT64[0] <= value <= _INT64[1] else float(value)


_DECODER: Final = json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=_int)


@dataclass(slots=True)
class Piece:
    """One top-level value of a line (``error is None``) or one fragment that did not parse.

    ``start``/``end`` are 0-based character offsets in the line; ``repaired`` holds the paths
    of the strings whose invalid text was replaced.
    """

    start: int
    end: int
    value: Any = None
    repaired: list[JsonPath] = field(default_factory=list)
    error: str | None = None


def parse_pieces(line: bytes, starts: re.Pattern[str] | None = None) -> list[Piece]:
    """The values of ``line`` with their invalid text replaced, and its unreadable fragments.

    Without ``starts`` the line is one value: a fragment that does not parse runs to the end
    of the line. With it, parsing resumes at the next match after a fragment.
    """
    text = line.decode("utf-8", "surrogateescape")
    pieces: list[Piece] = []
    pos = _skip(text, 0)
    while pos < len(text):
        try:
            value, end = _DECODER.raw_decode(text, pos)
            found: list[JsonPath] = []
            value = _fix(value, [], found)
        except json.JSONDecodeError as exc:
            reason = f"{exc.msg} at character {exc.pos + 1}"
        except ValueError as exc:  # a literal refused by the hooks above
            reason = str(exc)
        except RecursionError:
            reason = "nested too deeply"
        else:
            pieces.append(Piece(pos, end, value, found))
            pos = _skip(text, end)
            continue
        match = starts.search(text, pos + 1) if starts is not None else None
        end = match.start() if match is not None else len(text)
        pieces.append(Piece(pos, pos + len(text[pos:end].rstrip(" \t\r\n")), error=reason))
        pos = end
    return pieces


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match is not None else pos


def _fix(value: Any, path: list[str | int], found: list[JsonPath]) -> Any:
    """``value`` with every surrogate in its strings replaced (lists and dicts in place)."""
    if type(value) is str:
        if value.isascii() or _SURROGATE.search(value) is None:
            return value
        found.append(tuple(path))
        return _SURROGATE.sub("\ufffd", value)
    if type(value) is list:
        for i, item in enumerate(value):
            if type(item) is str and item.isascii():
                continue
            path.append(i)
            value[i] = _fix(item, path, found)
            path.pop()
    elif type(value) is dict:
        if any(not k.isascii() and _SURROGATE.search(k) for k in value):
            value = {_fix(k, [*path, k], found): v for k, v in value.items()}
        for key, item in value.items():
            if type(item) is str and item.isascii():
                continue
            path.append(key)
            value[key] = _fix(item, path, found)
            path.pop()
    return value


def path_text(path: JsonPath) -> str:
    """``resourceSpans[0].scopeSpans[0].spans[3].attributes[2]`` (``$`` for the root)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "$"


def _at(value: Any, path: JsonPath) -> Any:
    for part in path:
        value = value[part]
    return value


def _owner(path: JsonPath) -> str:
    """The JSON path of the span, log record, scope or resource that ``path`` lies in."""
    for keys in _OWNERS:
        for k in range(len(path) - 2, -1, -1):
            if path[k] in keys and isinstance(path[k + 1], int):
                return path_text(path[: k + 2])
    return "$"


def otlp_notes(value: Any, repaired: list[JsonPath]) -> Mapping[str, list[BadField]]:
    """The repaired strings of an OTLP/JSON export as bad fields, by the JSON path of their
    owner (a span, a log record, a scope, a resource, or ``$``); one per field.

    An attribute's field is its entry in ``attributes`` and its message names the key.
    """
    notes: dict[str, list[BadField]] = {}
    seen: set[str] = set()
    for path in repaired:
        where, message = path, REPLACED
        for k in range(len(path) - 2, -1, -1):
            if path[k] == "attributes" and isinstance(path[k + 1], int):
                where = path[: k + 2]
                entry = _at(value, where)
                key = entry.get("key") if isinstance(entry, dict) else None
                part = "key" if path[k + 2 : k + 3] == ("key",) else "value"
                message = f"attribute {key!r}: {part}: {REPLACED}"
                break
        text = path_text(where)
        if text not in seen:
            seen.add(text)
            notes.setdefault(_owner(where), []).append(BadField(text, message))
    return notes
