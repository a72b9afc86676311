"""Per-span attribute accumulator shared by the recording conventions.

Attributes are gathered in a plain dict while the step runs and written with one
``set_attributes`` call when the span ends (one lock acquisition instead of one per key).
Every captured text goes through :func:`~._attributes.text_value` (redaction, then size
limit); the keys that were truncated and the maskers that fired are written as
``groundtrace.truncated`` / ``groundtrace.redacted``.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Final

from . import semconv as sc
from ._attributes import SCAN_MARGIN, masked_key, safe_json, safe_str, text_value
from ._runtime import Settings, logger
from .redaction import Redactor

__all__ = [
    "AttributeValue",
    "Recorder",
    "as_float",
    "as_sequence",
    "content_hash",
    "content_id",
    "field_getter",
    "first_field",
    "text_of",
]

#: A value accepted by ``Span.set_attribute``.
AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]

_MISSING: Final = object()
_MAX_DEPTH: Final = 16


class Recorder:
    """Accumulates the attributes of one span and the truncation/redaction bookkeeping.

    The bookkeeping containers are created on first use: most spans truncate and mask nothing.
    """

    __slots__ = ("attrs", "fired", "settings", "truncated")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.attrs: dict[str, AttributeValue] = {}
        self.truncated: list[str] | None = None
        self.fired: set[str] | None = None

    def text(self, key: str, text: str, *, json_text: bool = False) -> str:
        """Mask and clip one captured text field, noting truncation under ``key``
        (of a JSON text only the string literals are masked, never its numbers)."""
        settings = self.settings
        redact = settings.redact
        if len(text) <= settings.max_attribute_length and (
            redact is None
            or (type(redact) is Redactor and not redact.may_change(text, triggers=not json_text))
        ):
            return text  # nothing to mask or cut (the common case)
        if self.truncated is None:
            self.truncated = []
        if self.fired is None:
            self.fired = set()
        return text_value(
            text,
            settings,
            key=key,
            truncated=self.truncated,
            fired=self.fired,
            json_text=json_text,
        )

    def may_change_each(self, texts: list[str]) -> list[bool]:
        """Whether :meth:`text` may have to mask each of ``texts`` (their length aside): the
        built-in redactor looks at all of them in one pass (most texts of a span need no
        masker); any other redaction function has to see every text."""
        redact = self.settings.redact
        if redact is None:
            return [False] * len(texts)
        if type(redact) is Redactor:
            return redact.may_change_each(texts)
        return [True] * len(texts)

    def put_text(self, key: str, text: str) -> None:
        """Record a captured text attribute (masked and clipped)."""
        self.attrs[key] = self.text(key, text)

    def json(self, key: str, value: object) -> str:
        """``value`` as captured JSON text, clipped, its strings masked (numbers, such as
        scores or embeddings, are never masked)."""
        return self.text(key, safe_json(_cut_long_strings(value, self.settings)), json_text=True)

    def masked(self, key: str, value: object, depth: int = 0) -> Any:
        """A JSON-ready copy of ``value`` with every string in it masked and clipped.

        Numbers, booleans and ``None`` are kept as they are; string mapping keys are masked
        like values (see :meth:`mapping_key`), other keys written as strings; the result stays
        valid JSON (a structured value is never masked as one JSON text). Other objects, and
        anything nested deeper than 16 levels, become masked text.
        """
        if isinstance(value, str):
            return self.text(key, value)
        if value is None or isinstance(value, int | float):
            return value
        if depth < _MAX_DEPTH:
            if isinstance(value, Mapping):
                return {
                    self.mapping_key(k): self.masked(key, v, depth + 1) for k, v in value.items()
                }
            if isinstance(value, list | tuple):
                return [self.masked(key, v, depth + 1) for v in value]
        return self.text(key, safe_json(value))

    def mapping_key(self, key: object) -> str:
        """A mapping key as captured: a string masked and clipped like a value, plus a suffix
        when that changed it (:func:`~._attributes.masked_key`: two keys never become one);
        any other key (a number) as its text, never masked."""
        if not isinstance(key, str):
            return safe_str(key)
        if self.fired is None:
            self.fired = set()
        return masked_key(key, self.settings, self.fired)

    def put_json(self, key: str, value: object) -> None:
        """Record ``value`` as captured JSON text (masked and clipped)."""
        self.attrs[key] = self.json(key, value)

    def note_truncated(self, key: str) -> None:
        """Record that ``key`` was cut (e.g. a list shortened to the configured maximum)."""
        if self.truncated is None:
            self.truncated = [key]
        else:
            self.truncated.append(key)

    def final(self) -> dict[str, AttributeValue]:
        """The attributes to write, including the truncation/redaction lists."""
        attrs = self.attrs
        if self.truncated:
            attrs[sc.GT_TRUNCATED] = sorted(set(self.truncated))
        if self.fired:
            attrs[sc.GT_REDACTED] = sorted(self.fired)
        return attrs


def _cut_long_strings(value: object, settings: Settings) -> object:
    """``value`` with a string too long to be scanned cut to what is (the value itself, or a
    value of a mapping such as the arguments of a call): its JSON text, once clipped, is the
    same, and what would be cut off is never serialised (a 50 MB argument costs nothing)."""
    most = settings.max_attribute_length + SCAN_MARGIN
    if type(value) is str:
        return value[:most] if len(value) > most else value
    if type(value) is dict and any(type(v) is str and len(v) > most for v in value.values()):
        return {k: v[:most] if type(v) is str and len(v) > most else v for k, v in value.items()}
    return value


def content_hash(text: str) -> str:
    """``"sha256:<hex>"`` of the UTF-8 bytes of ``text``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def content_id(text: str) -> str:
    """Stable id of an evidence string without one: the first 16 hex digits of its sha256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def as_float(value: object) -> float | None:
    """A finite float from a real number or a numeric string; ``None`` otherwise."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int:
        return float(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except Exception:
            return None
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def as_sequence(value: object) -> Sequence[Any]:
    """The items of a returned collection, without consuming iterators.

    Lists, tuples and other ``Sequence`` types (not str/bytes) are used as they are; ``None``
    is empty; anything else (including a lone mapping or object) is one item. Iterators are
    never iterated: that would consume the application's value.
    """
    if value is None:
        return ()
    if type(value) is list or isinstance(value, tuple):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return value
    return (value,)


def field_getter(item: object) -> Any:
    """A ``get(name)`` function over a mapping's keys or an object's attributes."""
    if type(item) is dict:
        return item.get  # a missing key reads as None, which every reader skips
    if isinstance(item, Mapping):
        mapping = item

        def get_key(name: str) -> object:
            try:
                return mapping.get(name, _MISSING)
            except Exception:
                return _MISSING

        return get_key

    def get_attr(name: str) -> object:
        try:
            return getattr(item, name, _MISSING)
        except Exception:  # a raising property must not break recording
            logger.debug("attribute %s raised on %s", name, type(item), exc_info=True)
            return _MISSING

    return get_attr


def first_field(get: Any, names: Sequence[str]) -> object:
    """The first present, non-None value among ``names``; ``None`` when there is none."""
    for name in names:
        value = get(name)
        if value is not _MISSING and value is not None:
            return value
    return None


def text_of(value: object) -> str | None:
    """Text form of a field value (bytes decoded as UTF-8); ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return safe_str(value)
