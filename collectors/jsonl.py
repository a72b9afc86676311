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
        InputError: the file cannot be read or is not UTF-8 (with the path), a line is not
            JSON or (with ``objects``) not an object (with path and line).
    """
    name = os.fspath(path)
    try:
        lines = Path(name).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path=name) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {what}: not UTF-8 ({exc.reason})", path=name) from None
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
        if objects and not isinstance(row, dict):
            raise InputError("expected a JSON object", path=name, line=number)
        yield number, row


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
    if text[pos + 1 :].strip():
        line = text.count("\n", 0, pos) + 1
        raise InputError("invalid JSON: extra data after the array", path=name, line=line)
