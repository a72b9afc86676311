"""A protobuf message's bytes split at one repeated field, without decoding them.

The receiver decodes a large export request a slice of spans at a time (so that neither the
whole decoded message nor one long parse that holds the GIL is ever needed): each level
(request, resource, scope) is cut into its *head*, every field but the repeated one, which
protobuf then parses as usual, and the repeated field's entries. The walk reads only tags
and lengths; any group, malformed tag or length raises :class:`Unsliceable`, and the caller
lets protobuf parse the whole body, which reports what is wrong in its own words.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

__all__ = ["Unsliceable", "entries", "head", "runs"]

_LEN: Final = 2  # the wire type of strings, bytes and embedded messages


class Unsliceable(Exception):
    """The bytes hold a group or are not well-formed protobuf."""


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while pos < end and shift < 64:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
    raise Unsliceable


def _fields(data: bytes, start: int, end: int, number: int) -> Iterator[tuple[bool, int, int, int]]:
    """Each field of ``data[start:end]``: whether it is an entry of the repeated message field
    ``number``, where it starts (its tag), where its value starts and where it ends."""
    pos = start
    while pos < end:
        first = pos
        tag, pos = _varint(data, pos, end)
        kind = tag & 7
        if kind == 0:
            _, pos = _varint(data, pos, end)
        elif kind == 1:
            pos += 8
        elif kind == _LEN:
            size, pos = _varint(data, pos, end)
            pos += size
        elif kind == 5:
            pos += 4
        else:
            raise Unsliceable  # a group (3, 4) or no wire type at all (6, 7)
        if pos > end or tag >> 3 == 0:
            raise Unsliceable
        value = pos - size if kind == _LEN else pos
        yield tag >> 3 == number and kind == _LEN, first, value, pos


def head(data: bytes, start: int, end: int, number: int) -> bytes:
    """The fields of ``data[start:end]`` other than ``number``: a message of the same type
    without that repeated field."""
    return b"".join(data[a:b] for entry, a, _, b in _fields(data, start, end, number) if not entry)


def entries(data: bytes, start: int, end: int, number: int) -> Iterator[tuple[int, int]]:
    """Where the value of each entry of the repeated field ``number`` starts and ends."""
    for entry, _, value, stop in _fields(data, start, end, number):
        if entry:
            yield value, stop


def runs(data: bytes, start: int, end: int, number: int, size: int) -> Iterator[tuple[int, int]]:
    """Runs of adjacent entries of the repeated field ``number`` (tags included), each about
    ``size`` bytes or a single longer entry: ``data[a:b]`` is a message of the same type
    holding only those entries."""
    run_start = run_end = -1
    for entry, first, _, stop in _fields(data, start, end, number):
        if not entry:
            continue
        if first != run_end or stop - run_start > size:
            if run_start >= 0:
                yield run_start, run_end
            run_start = first
        run_end = stop
    if run_start >= 0:
        yield run_start, run_end
