"""Reading JSON-lines input files (case files, gold sets, datasets) with precise errors.

Every JSONL file a user hands to groundtrace goes through :func:`read_jsonl`, so every one of
them reports a bad line the same way: ``cases.jsonl:7: invalid JSON: Expecting ',' delimiter``.

Usage::

    from groundtrace.collectors.jsonl import read_jsonl

    for line_no, row in read_jsonl("cases.jsonl", what="case file"):
        ...
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["read_jsonl"]

_SPACE = re.compile(r"\s*")
#: The tokens that matter to nesting: strings (skipped whole) and structural characters.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def read_jsonl(
    path: str | os.PathLike[str],
    *,
    what: str = "file",
    objects: bool = True,
    comments: bool = False,
    allow_array: bool = False,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSONL file.

    Args:
        path: the file.
        what: what the file is, for the "cannot read ..." message (``"case file"``).
        objects: require every row to be a JSON object.
        comments: skip lines whose first non-blank character is ``#``.
        allow_array: also accept a file holding one JSON array (e.g. a dataset's ``.json``);
            each item is numbered by the line it starts on.

    Raises:
        InputError: the file cannot be read (with the path), is not UTF-8 (with path and
            line), a line is not JSON, is nested deeper than the parser can follow (with path,
            line and the top-level field holding it) or (with ``objects``) is not an object.
    """
    name = os.fspath(path)
    try:
        lines = _decode(Path(name).read_bytes(), name, what).splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path=name) from None
    if allow_array and next((ln.lstrip()[:1] for ln in lines if ln.strip()), "") == "[":
        yield from _array_items(name, "\n".join(lines), objects)
        return
    for number, text in enumerate(lines, start=1):
        stripped = text.strip()
        if not stripped or (comments and stripped.startswith("#")):
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=name, line=number) from None
        except RecursionError:
            raise _too_deep(name, number, text, 0) from None
        if objects and not isinstance(row, dict):
            raise InputError("expected a JSON object", path=name, line=number)
        yield number, row


def _decode(data: bytes, name: str, what: str) -> str:
    """``data`` as UTF-8 text; an invalid byte is refused with the line it is on."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        line = len((before + "x").splitlines())  # numbered as ``splitlines`` numbers lines
        raise InputError(
            f"cannot read {what}: not UTF-8 ({exc.reason}, byte {exc.start + 1} of the file)",
            path=name,
            line=line,
        ) from None


def _too_deep(name: str, line: int, text: str, pos: int) -> InputError:
    """The error of a value at ``text[pos:]`` nested deeper than the JSON parser's limit.

    Names the top-level key of the object whose value is nested deepest (a nesting bomb such
    as 100 000 ``[``), found by a scan that does not recurse.
    """
    depth, key, deepest, field = 0, None, 0, None
    last: str | None = None
    for match in _TOKEN.finditer(text, pos):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, field = depth, key
        elif token in "]}":
            depth -= 1
            if depth <= 0:
                break
        elif token == ":":
            if depth == 1:
                key = last
        elif token != ",":
            last = token[1:-1]
    return InputError("invalid JSON: nested too deeply", path=name, line=line, field=field)


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _array_items(name: str, text: str, objects: bool) -> Iterator[tuple[int, Any]]:
    """The items of a JSON array, each numbered by the line it starts on."""
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "[":
        raise InputError("expected a JSON array or JSON lines", path=name)
    pos = _skip(text, pos + 1)
    line, counted, number = 1, 0, 0
    try:
        while text[pos : pos + 1] != "]":
            if number:
                if text[pos : pos + 1] != ",":
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
                pos = _skip(text, pos + 1)
            item, end = decoder.raw_decode(text, pos)
            line, counted, number = line + text.count("\n", counted, pos), pos, number + 1
            if objects and not isinstance(item, dict):
                raise InputError(f"item {number} is not a JSON object", path=name, line=line)
            yield line, item
            pos = _skip(text, end)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path=name, line=exc.lineno) from None
    except RecursionError:
        line = text.count("\n", 0, pos) + 1
        raise _too_deep(name, line, text, pos) from None
    if text[pos + 1 :].strip():
        line = text.count("\n", 0, pos) + 1
        raise InputError("invalid JSON: extra data after the array", path=name, line=line)
