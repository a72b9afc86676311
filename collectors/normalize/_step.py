"""The small attributes a :class:`~groundtrace.collectors.model.Step` keeps of its span."""

from __future__ import annotations

from math import isfinite
from typing import Any

from groundtrace.collectors.spans import AttributeValue

__all__ = ["step_attributes"]

#: strings longer than this are left out of Step.attributes (content has typed fields).
_MAX_STEP_STRING = 256
_MAX_STEP_LIST = 32


#: OTLP/JSON's spelling of the doubles JSON has no number for.
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _json_number(value: float) -> float | str:
    """``value``, or OTLP/JSON's spelling of it when it is not finite."""
    return value if isfinite(value) else _NON_FINITE[repr(value)]


def _kept_list(value: list[Any]) -> list[Any] | None:
    """``value`` when it has at most 32 items, each a number, a boolean or a string of at most
    256 characters (a copy when a double in it is not finite); ``None``: leave it out."""
    if len(value) > _MAX_STEP_LIST:
        return None
    finite = True
    for x in value:
        kind = type(x)
        if kind is str:
            if len(x) > _MAX_STEP_STRING:
                return None
        elif kind is float:
            finite = finite and isfinite(x)
        elif not (
            isinstance(x, bool | int | float) or (isinstance(x, str) and len(x) <= _MAX_STEP_STRING)
        ):
            return None
    return value if finite else [_json_number(x) if type(x) is float else x for x in value]


def step_attributes(attrs: dict[str, AttributeValue]) -> dict[str, Any]:
    """Scalars, short strings and short lists of them (``None`` values are left out).

    The values are JSON values, so a step reads back from τ JSON as it was written: a
    non-finite double becomes ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` as in OTLP/JSON.
    """
    out: dict[str, Any] = attrs.copy()  # most attributes stay: copy, then drop the few
    for key, value in attrs.items():
        if type(value) is str:
            if len(value) > _MAX_STEP_STRING:
                del out[key]
        elif type(value) is float:
            if not isfinite(value):
                out[key] = _json_number(value)
        elif value is None:
            del out[key]
        elif isinstance(value, list):
            kept = _kept_list(value)
            if kept is None:
                del out[key]
            elif kept is not value:
                out[key] = kept
    return out
