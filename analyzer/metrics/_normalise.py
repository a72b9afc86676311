"""Answer normalisation (SPEC section 4.2.1).

An answer is normalised by: lower-casing; reducing a yes/no answer to that word when "yes" or
"no" is a whole answer word -- the whole answer or followed by punctuation ("Yes, both are"
-> "yes"), never the first word of a longer phrase ("No Doubt" stays "no doubt");
removing thousands separators ("1,000" -> "1000"); stripping punctuation (a decimal point
between digits is kept), the articles "a", "an", "the" and extra whitespace; and writing
spelled numbers as digits, a whole number at a time ("three" -> "3", "twenty-one" -> "21",
"one thousand" -> "1000", "seven hundred and five" -> "705", "3.5 million" -> "3500000").
"""

from __future__ import annotations

import re
import string
from decimal import Decimal
from typing import Final

__all__ = ["SPECIAL_ANSWERS", "answer_tokens", "normalise_answer"]

#: Number words with their value; ``hundred`` and the scales combine with what precedes.
_UNITS: Final[dict[str, int]] = {
    word: value
    for value, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
    )
}  # fmt: skip
_TENS: Final[dict[str, int]] = {
    word: 10 * (i + 2)
    for i, word in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
    )
}
_HUNDRED: Final = "hundred"
_SCALES: Final[dict[str, int]] = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
#: What may follow each kind of token inside one spelled number.
_FOLLOWS: Final[dict[str | None, frozenset[str]]] = {
    None: frozenset({"zero", "digits", "unit", "teen", "ten", "hundred", "scale"}),
    "digits": frozenset({"hundred", "scale"}),
    "unit": frozenset({"hundred", "scale"}),
    "teen": frozenset({"hundred", "scale"}),
    "ten": frozenset({"unit", "hundred", "scale"}),
    "hundred": frozenset({"unit", "teen", "ten", "scale", "and"}),
    "scale": frozenset({"unit", "teen", "ten", "and"}),
    "and": frozenset({"unit", "teen", "ten"}),
    "zero": frozenset(),
}
_DIGITS_RE: Final = re.compile(r"\d+(?:\.\d+)?")
#: "yes"/"no" as a whole answer word: the whole answer, or followed by clause punctuation
#: (not by a hyphen that joins a word: "no-one", "yes-man").
_STANCE_RE: Final = re.compile(r"\W*(yes|no)(?:\s*[,.;:!?…—–\"”’')\]]|\s+-|\s*$)")
#: Answers that score F1 = 0 against any other answer (HotpotQA convention).
SPECIAL_ANSWERS: Final = frozenset({"yes", "no", "noanswer"})

_THOUSANDS_RE: Final = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_DECIMAL_POINT: Final = "\x00"
_DECIMAL_RE: Final = re.compile(r"(?<=\d)\.(?=\d)")
_PUNCT_TABLE: Final = str.maketrans(dict.fromkeys(string.punctuation + "‘’“”–—…", " "))
_ARTICLES_RE: Final = re.compile(r"\b(a|an|the)\b")


def _kind(token: str) -> tuple[str | None, int]:
    """The kind of a token inside a spelled number, with its value (``None``: no number)."""
    if token in _UNITS:
        value = _UNITS[token]
        return ("zero" if value == 0 else "unit" if value < 10 else "teen"), value
    if token in _TENS:
        return "ten", _TENS[token]
    if token == _HUNDRED:
        return "hundred", 100
    if token in _SCALES:
        return "scale", _SCALES[token]
    if token == "and":
        return "and", 0
    if _DIGITS_RE.fullmatch(token):
        return "digits", 0
    return None, 0


def _spelled_number(tokens: list[str], start: int) -> tuple[Decimal, int] | None:
    """The number spelled by ``tokens[start:end]`` and ``end`` (``None``: none starts there).

    Reads "twenty one" (from "twenty-one"), "one thousand", "seven hundred and five",
    "3.5 million"; a token that cannot continue the number ends it ("one two" is two numbers).
    """
    total = group = Decimal(0)
    last: str | None = None
    cap = 10**12  # each scale must be smaller than the one before ("million ... thousand")
    end, value = start, Decimal(0)
    for i in range(start, len(tokens)):
        kind, number = _kind(tokens[i])
        if kind is None or kind not in _FOLLOWS[last]:
            break
        if (kind == "hundred" and group >= 100) or (kind == "scale" and number >= cap):
            break
        if kind == "digits":
            group = Decimal(tokens[i])
        elif kind in ("unit", "teen", "ten"):
            group += number
        elif kind == "hundred":
            group = (group or Decimal(1)) * 100
        elif kind == "scale":
            total, group, cap = total + (group or Decimal(1)) * number, Decimal(0), number
        last = kind
        if kind != "and":
            end, value = i + 1, total + group
    return (value, end) if end > start else None


def _numbers_as_digits(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        found = _spelled_number(tokens, i)
        if found is None or (found[1] == i + 1 and _DIGITS_RE.fullmatch(tokens[i])):
            out.append(tokens[i])  # not a number, or digits as they were written
            i += 1
            continue
        value, i = found
        out.append(str(int(value)) if value == value.to_integral_value() else str(value))
    return out


def answer_tokens(text: str) -> list[str]:
    """The normalised tokens of ``text`` without the yes/no reduction (every word kept)."""
    lowered = _THOUSANDS_RE.sub("", text.lower())
    lowered = _DECIMAL_RE.sub(_DECIMAL_POINT, lowered)
    lowered = lowered.translate(_PUNCT_TABLE).replace(_DECIMAL_POINT, ".")
    lowered = _ARTICLES_RE.sub(" ", lowered)
    return _numbers_as_digits(lowered.split())


def normalise_answer(text: str) -> str:
    """Normalise an answer string for comparison (see the module docstring for the steps).

    Args:
        text: a predicted or reference answer.

    Returns:
        The normalised answer: lower-case tokens separated by single spaces.
    """
    stance = _STANCE_RE.match(text.lower())
    if stance is not None:
        return stance.group(1)
    return " ".join(answer_tokens(text))
