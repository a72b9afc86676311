"""Typed access to span attributes; wrong types become findings, never exceptions."""

from __future__ import annotations

import math
from typing import Any

import orjson

from groundtrace.collectors.model import Finding, FindingKind
from groundtrace.collectors.spans import AttributeValue, SourceLocation, SpanRecord

from ._flat import GROUPED_PREFIXES, grouped_subset, indexed_groups

__all__ = ["QUERY_KEYS", "SpanView", "json_or_none", "location_text", "query_in"]

# spans of one input line share one SourceLocation: remember the last one's text
_last_location: tuple[SourceLocation | None, str | None] = (None, None)


#: Keys that name the query in a recorded call's keyword arguments or a chain's JSON input,
#: in order of preference.
QUERY_KEYS = ("query", "question", "input")


def query_in(mapping: object) -> str | None:
    """The first string under one of :data:`QUERY_KEYS` of ``mapping`` (a dict), if any."""
    if isinstance(mapping, dict):
        for name in QUERY_KEYS:
            value = mapping.get(name)
            if isinstance(value, str):
                return value
    return None


def json_or_none(raw: object) -> Any:
    """``raw`` decoded as JSON, or ``None`` when it is not a string of valid JSON."""
    if not isinstance(raw, str):
        return None
    try:
        return orjson.loads(raw)
    except ValueError:
        return None


def location_text(location: SourceLocation | None) -> str | None:
    """``str(location)`` (``None`` stays ``None``), formatted once per location object."""
    global _last_location
    last, text = _last_location
    if location is last:
        return text
    text = None if location is None else str(location)
    _last_location = (location, text)
    return text


class SpanView:
    """One span's attributes with typed getters that report bad types as findings.

    Each getter returns ``None`` when the key is absent; when it is present with the wrong
    type a ``bad_attribute_type`` finding naming the key is appended to ``findings`` and
    ``None`` is returned (the value is not coerced: a guess would hide the bug).
    """

    __slots__ = ("_grouped", "attrs", "findings", "location", "span")

    def __init__(self, span: SpanRecord, findings: list[Finding]) -> None:
        self.span = span
        self.attrs: dict[str, AttributeValue] = span.attributes
        self.findings = findings
        self.location = location_text(span.location)
        self._grouped: dict[str, AttributeValue] | None = None

    def groups(self, prefix: str) -> list[tuple[int, dict[str, AttributeValue]]]:
        """``indexed_groups(self.attrs, prefix)``; one pass over the keys serves every prefix."""
        if prefix not in GROUPED_PREFIXES:
            return indexed_groups(self.attrs, prefix)
        grouped = self._grouped
        if grouped is None:
            grouped = self._grouped = grouped_subset(self.attrs)
        return indexed_groups(grouped, prefix) if grouped else []

    def finding(self, kind: str, message: str, key: str | None = None) -> None:
        """Record a finding about this span."""
        self.findings.append(Finding(kind, message, self.span.span_id, self.location, key))

    def bad(self, key: str, expected: str, value: object) -> None:
        """Record a ``bad_attribute_type`` finding."""
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        self.finding(
            FindingKind.BAD_ATTRIBUTE_TYPE,
            f"attribute {key} should be {expected}, got {type(value).__name__} {shown}",
            key,
        )

    def string(self, key: str) -> str | None:
        """A string attribute."""
        value = self.attrs.get(key)
        if value is None or isinstance(value, str):
            return value
        self.bad(key, "a string", value)
        return None

    def text(self, key: str) -> str | None:
        """A string attribute; scalars are rendered (free-text fields of other conventions)."""
        value = self.attrs.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool | int | float):
            return str(value)
        self.bad(key, "a string", value)
        return None

    def integer(self, key: str) -> int | None:
        """An integer attribute (an integral float is accepted)."""
        value = self.attrs.get(key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        self.bad(key, "an integer", value)
        return None

    def number(self, key: str) -> float | None:
        """A finite numeric attribute."""
        value = self.attrs.get(key)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        self.bad(key, "a finite number", value)
        return None

    def boolean(self, key: str) -> bool | None:
        """A boolean attribute."""
        value = self.attrs.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.bad(key, "a boolean", value)
        return None

    def strings(self, key: str) -> tuple[str, ...] | None:
        """A string-list attribute (a single string is not accepted as a list)."""
        value = self.attrs.get(key)
        if value is None:
            return None
        if isinstance(value, list):
            for item in value:  # a loop, not all(<genexpr>): this runs on most spans
                if not isinstance(item, str):
                    break
            else:
                return tuple(value)
        self.bad(key, "a list of strings", value)
        return None

    def json_value(self, key: str, expected: type[Any] | None = None) -> Any:
        """A JSON-text attribute, decoded; ``expected`` checks the decoded type."""
        raw = self.attrs.get(key)
        if raw is None:
            return None
        if not isinstance(raw, str):
            self.bad(key, "JSON text", raw)
            return None
        try:
            value = orjson.loads(raw)
        except ValueError as exc:
            self.finding(
                FindingKind.BAD_ATTRIBUTE_TYPE, f"attribute {key} is not valid JSON ({exc})", key
            )
            return None
        if expected is not None and not isinstance(value, expected):
            self.bad(key, f"JSON {expected.__name__}", value)
            return None
        return value
