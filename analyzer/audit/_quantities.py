"""Quantities of an answer's text, for the ``conflicting-numbers`` pre-filter.

A quantity is a number that is not part of a name or an identifier, with its unit:

* a number joined to letters (``COVID-19``, ``GPT-4``, ``B2B``, ``4o``), after a name or an
  acronym (``ISO 9001``, ``Windows 10``, ``Apollo 11``, ``Section 3``; a capitalised word that
  starts a sentence or is a month is not a name) or with more than one dot (``3.11.2``) is part
  of a name, not a quantity;
* a four-digit number from 1000 to 2099 without a separator is a year (``in 2010``, ``the
  2010 census``) unless a unit or a plural noun follows it (``1500 km``, ``2000 members``);
* any other number is a count; the word after it (not a stop word) is its unit, singular and
  lower-cased; units of one dimension are converted (``12 months`` = ``1 year``, ``5 kg`` =
  ``5000 g``, ``40%`` = ``40 percent``).

:func:`template` gives the answer's normalised words with each quantity replaced by its kind
(``<year>``, ``<n:month>``), and the quantities' values in the order they occur; two answers
with the same template speak of the same things with the same words, so their quantities can be
compared position by position.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["Quantity", "template"]

#: ``(kind, value)``: kind ``year`` or ``n:<dimension>``, value in the dimension's base unit.
Quantity = tuple[str, float]

_NUMBER: Final = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)*)(%|[A-Za-z]+)?")
_WORD: Final = re.compile(r"%|[^\W\d_]+|\d[\d,]*(?:\.\d+)*|<[^>]+>")
_GROUPED: Final = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NAME_BEFORE: Final = re.compile(r"([A-Za-z][\w&]*)[\s]+$")
_JOINED_BEFORE: Final = re.compile(r"[A-Za-z]-?$")
_SENTENCE_START: Final = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
_MONTHS: Final = frozenset(
    (
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
        "sep", "sept", "oct", "nov", "dec",
    )
)  # fmt: skip
_STOP: Final = frozenset(
    (
        "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "by", "from", "with",
        "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these",
        "those", "which", "who", "than", "then", "there", "their", "his", "her", "he", "she",
        "they", "we", "you", "i",
    )
)  # fmt: skip
#: unit word -> (dimension, factor to the dimension's base unit).
_UNITS: Final[dict[str, tuple[str, float]]] = {
    "%": ("percent", 1.0), "percent": ("percent", 1.0), "pct": ("percent", 1.0),
    "second": ("time", 1.0), "sec": ("time", 1.0), "s": ("time", 1.0),
    "minute": ("time", 60.0), "min": ("time", 60.0),
    "hour": ("time", 3600.0), "hr": ("time", 3600.0), "h": ("time", 3600.0),
    "day": ("time", 86400.0), "week": ("time", 604800.0), "fortnight": ("time", 1209600.0),
    "month": ("month", 1.0), "year": ("month", 12.0), "yr": ("month", 12.0),
    "decade": ("month", 120.0),
    "mg": ("mass", 0.001), "g": ("mass", 1.0), "gram": ("mass", 1.0), "kg": ("mass", 1000.0),
    "kilogram": ("mass", 1000.0), "tonne": ("mass", 1e6), "t": ("mass", 1e6),
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0),
    "metre": ("length", 1.0), "meter": ("length", 1.0), "km": ("length", 1000.0),
    "kilometre": ("length", 1000.0), "kilometer": ("length", 1000.0),
    "thousand": ("count", 1e3), "million": ("count", 1e6), "billion": ("count", 1e9),
}  # fmt: skip


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and len(word) > 3 and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _value(digits: str) -> float | None:
    if digits.count(".") > 1:
        return None  # a version: 3.11.2
    if _GROUPED.fullmatch(digits):
        return float(digits.replace(",", ""))
    if "," in digits:
        return None  # 1,2,3 or 2,5: a list or a decimal comma, not one quantity
    return float(digits)


def _is_name(before: str) -> bool:
    """Whether the text just before a number ends in a name the number belongs to."""
    if _JOINED_BEFORE.search(before):
        return True  # COVID-19, GPT4
    match = _NAME_BEFORE.search(before)
    if match is None:
        return False
    word = match.group(1)
    if word.casefold() in _MONTHS:
        return False  # January 2012, May 30
    if word.isupper() and len(word) > 1:
        return True  # ISO 9001, GPT 4
    return word[0].isupper() and not _SENTENCE_START.search(before[: match.start()])


def _next_word(after: str) -> str:
    match = re.match(r"\s*([A-Za-z]+)", after)
    return match.group(1) if match else ""


def _quantity(digits: str, joined: str, after: str) -> Quantity | None:
    """The quantity of one number (``joined``: letters right after it), None for a name."""
    value = _value(digits)
    if value is None:
        return None
    if joined and joined.casefold() not in _UNITS and joined.casefold() not in {
        "st", "nd", "rd", "th"}:  # fmt: skip
        return None  # 4o, 9001b: an identifier
    unit = joined.casefold() if joined else _next_word(after).casefold()
    if unit in {"st", "nd", "rd", "th"}:
        unit = ""
    if unit in _STOP or unit in _MONTHS:
        unit = ""
    singular = _singular(unit)
    if (
        not joined
        and re.fullmatch(r"1\d{3}|20\d{2}", digits)
        and (not unit or (singular not in _UNITS and singular == unit))
    ):
        return ("year", value)  # in 2010, the 2010 census (a count: 2000 members, 1500 km)
    dimension, factor = _UNITS.get(singular, (singular or "bare", 1.0))
    return (f"n:{dimension}", value * factor)


def template(text: str) -> tuple[str, tuple[Quantity, ...]]:
    """The text's normalised words with its quantities replaced by their kinds, and the
    quantities in order (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    pieces: list[str] = []
    quantities: list[Quantity] = []
    last = 0
    for match in _NUMBER.finditer(text):
        digits, joined = match.group(1).rstrip(",."), match.group(2) or ""
        before = text[: match.start()]
        after = text[match.end() :]
        quantity = None if _is_name(before) else _quantity(digits, joined, after)
        if quantity is None:
            continue
        pieces.append(text[last : match.start()])
        end = match.end()
        if not joined and quantity[0] != "year" and quantity[0] != "n:bare":
            unit = re.match(r"\s*[A-Za-z]+", after)  # the unit word is part of the quantity
            end += unit.end() if unit else 0
        pieces.append(f" <{quantity[0]}> ")
        quantities.append(quantity)
        last = end
    pieces.append(text[last:])
    folded = "".join(pieces).casefold()
    words = _WORD.findall(folded)
    return " ".join(words), tuple(quantities)
