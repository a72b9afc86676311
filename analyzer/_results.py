"""Analysis results as typed, versioned records, encoded and decoded with msgspec.

Every result an analysis writes (an intervention run's summary, a path report, a judge
validation record, a gate report...) is a :class:`Result`: a ``msgspec.Struct`` whose first
key is ``format_version`` (``"MAJOR.MINOR"``). A reader accepts every minor version of its
major version; a file of another major version, or a field of the wrong type, fails with an
:class:`~groundtrace.analyzer.errors.InputError` that names the file and the field.

Usage::

    data = encode(report)                       # bytes, JSON
    again = decode(data, PathReport, source="paths.json")
    assert again == report
"""

from __future__ import annotations

import re
from pathlib import Path, PurePath
from typing import Any, TypeVar

import msgspec

from groundtrace.analyzer.errors import InputError

__all__ = ["RESULT_FORMAT_VERSION", "Result", "decode", "encode", "read", "to_builtins", "write"]

#: Format version of every result record. Bump the minor version for additions readers may
#: ignore, the major version for changes they cannot read.
RESULT_FORMAT_VERSION = "1.5"

_VERSION_FIELD = "format_version"
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")

R = TypeVar("R", bound="Result")


class Result(msgspec.Struct, frozen=True):
    """Base of every analysis result: carries the result-format version, its first key.

    Subclasses are declared ``frozen=True, kw_only=True`` (their fields follow the version).
    """

    format_version: str = RESULT_FORMAT_VERSION


class _Header(msgspec.Struct):
    format_version: Any = None


def _major(version: str) -> str:
    return version.split(".", 1)[0]


def encode(record: msgspec.Struct, *, indent: int = 0) -> bytes:
    """The record as JSON bytes (``indent`` > 0 pretty-prints)."""
    data = msgspec.json.encode(record)
    return msgspec.json.format(data, indent=indent) if indent else data


def _as_json(value: Any) -> Any:
    """What a value msgspec cannot encode is in JSON: a path as its text."""
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def to_builtins(record: Any) -> Any:
    """The record as plain dicts, lists and scalars: exactly what its JSON decodes to (a path
    in an analysis's in-memory result, e.g. its run folder, as its text)."""
    return msgspec.json.decode(msgspec.json.encode(record, enc_hook=_as_json))


def decode(
    data: bytes | str, kind: type[R], *, source: str = "<result>", legacy: bool = False
) -> R:
    """Read a result record, checking its format version and every field's type.

    Args:
        data: the JSON text.
        kind: the record type.
        source: the file name the errors name.
        legacy: read a file without ``format_version`` as the current version (for a kind
            whose files carried their own schema id before results were versioned).

    Raises:
        InputError: not JSON, no or another major format version, or a field of the wrong
            type (the message names ``source`` and the field's JSON path).
    """
    try:
        version = msgspec.json.decode(data, type=_Header).format_version
    except msgspec.DecodeError as exc:
        raise InputError(f"not a {kind.__name__}: {exc}", path=source) from None
    if version is None and not legacy:
        raise InputError(
            f"not a {kind.__name__}: no result format version", path=source, field=_VERSION_FIELD
        )
    if version is not None and (
        not isinstance(version, str) or _major(version) != _major(RESULT_FORMAT_VERSION)
    ):
        raise InputError(
            f"result format {version!r} cannot be read by this groundtrace (it reads "
            f"{_major(RESULT_FORMAT_VERSION)}.x)", path=source, field=_VERSION_FIELD,
        )  # fmt: skip
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _AT.search(message)
        field = match.group("path").lstrip(".") if match else None
        reason = message[: match.start()] if match else message
        raise InputError(f"{reason} in a {kind.__name__}", path=source, field=field) from None


def read(path: str | Path, kind: type[R], *, legacy: bool = False) -> R:
    """:func:`decode` the file at ``path``.

    Raises:
        InputError: the file cannot be read or is not a valid record of ``kind``.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None
    return decode(data, kind, source=str(path), legacy=legacy)


def write(path: str | Path, record: Result) -> None:
    """Write ``record`` to ``path`` as indented JSON (UTF-8; the folder is created).

    Raises:
        InputError: the file cannot be written.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(encode(record, indent=2) + b"\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(path)) from None
