"""JSON codec of the trace model: dataclasses <-> plain JSON objects, strictly checked."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from typing import Any, TypeVar, cast

from ._model_types import MODEL_VERSION, Trace
from .errors import InputError

__all__ = ["dumps", "from_obj", "loads", "to_obj"]

T = TypeVar("T")


#: JSON has no NaN or infinities: they are written as OTLP/JSON spells such doubles.
_NON_FINITE: dict[str, str] = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def to_obj(value: Any) -> Any:
    """Convert a model value to JSON-compatible objects.

    Tuples become lists; a non-finite float (e.g. a ``NaN`` span attribute, which OTLP
    allows) becomes the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``.
    """
    if type(value) is float:
        return value if math.isfinite(value) else _NON_FINITE[repr(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_obj(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, tuple | list):
        return [to_obj(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_obj(v) for k, v in value.items()}
    return value


def dumps(trace: Trace) -> str:
    """Compact, deterministic JSON text of a trace."""
    return json.dumps(to_obj(trace), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def loads(text: str | bytes) -> Trace:
    """Parse JSON text produced by :func:`dumps`.

    Raises:
        InputError: not JSON, or not the trace-model layout of :data:`MODEL_VERSION`.
    """
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError("a trace must be a JSON object")
    version = data.get("model_version")
    if version != MODEL_VERSION:
        raise InputError(
            f"unsupported trace model version {version!r} (expected {MODEL_VERSION!r})",
            field="model_version",
        )
    return from_obj(Trace, data, "$")


@cache
def _fields(cls: Any) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_obj(cls: type[T], data: Any, path: str) -> T:
    """Build dataclass ``cls`` from a JSON object, checking every field's type."""
    if not isinstance(data, dict):
        raise InputError(f"expected an object for {cls.__name__}", field=path)
    hints = _hints(cast(Any, cls))
    kwargs: dict[str, Any] = {}
    known = set()
    for f in _fields(cast(Any, cls)):
        known.add(f.name)
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise InputError(f"missing field {f.name!r}", field=f"{path}.{f.name}")
            continue
        kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{path}.{f.name}")
    extra = set(data) - known
    if extra:
        raise InputError(f"unknown fields {sorted(extra)}", field=path)
    return cls(**kwargs)


def _convert(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _convert(inner[0], value, path)
        for candidate in inner:  # pragma: no cover - no multi-member unions in the model
            try:
                return _convert(candidate, value, path)
            except InputError:
                continue
        raise InputError(f"no type of {tp} matches", field=path)  # pragma: no cover
    if origin is tuple:
        if not isinstance(value, list):
            raise InputError("expected a list", field=path)
        (item,) = typing.get_args(tp)[:1]
        return tuple(_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise InputError("expected an object", field=path)
        return value
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        return from_obj(tp, value, path)  # type: ignore[arg-type]
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError("expected a number", field=path)
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError("expected an integer", field=path)
        return value
    if tp in (str, bool):
        if not isinstance(value, tp):
            raise InputError(f"expected {tp.__name__}", field=path)
        return value
    raise InputError(f"unsupported type {tp}", field=path)  # pragma: no cover
