"""Answer normalisation and soft correctness (SPEC section 4.2.1).

An answer is normalised by: lower-casing; removing thousands separators ("1,000" -> "1000");
spelling number words as digits ("three" -> "3"); stripping punctuation (a decimal point
between digits is kept), the articles "a", "an", "the" and extra whitespace; and reducing an
answer that starts with "yes" or "no" to that word ("Yes, both are" -> "yes").

A prediction is correct when it matches the reference exactly after normalisation (EM) or
its token-level F1 with the reference is at least 0.8. As in the HotpotQA evaluation, a
yes/no/noanswer pair that differs scores F1 = 0.

Usage::

    from groundtrace.analyzer.metrics._text import score_answer

    s = score_answer("The Beatles.", "Beatles")  # AnswerScore(em=True, f1=1.0, correct=True)
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_F1_THRESHOLD",
    "AnswerScore",
    "exact_match",
    "normalise_answer",
    "score_answer",
    "soft_correct",
    "token_f1",
]

#: Token-F1 at or above which an answer counts as correct (a profile setting).
DEFAULT_F1_THRESHOLD: Final = 0.8

_NUMBER_WORDS: Final[dict[str, str]] = {
    word: str(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
}
_YES_NO: Final = frozenset({"yes", "no"})
_SPECIAL: Final = frozenset({"yes", "no", "noanswer"})

_THOUSANDS_RE: Final = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_DECIMAL_POINT: Final = "\x00"
_DECIMAL_RE: Final = re.compile(r"(?<=\d)\.(?=\d)")
_PUNCT_TABLE: Final = str.maketrans(dict.fromkeys(string.punctuation + "‘’“”–—…", " "))
_ARTICLES_RE: Final = re.compile(r"\b(a|an|the)\b")


def normalise_answer(text: str) -> str:
    """Normalise an answer string for comparison (see the module docstring for the steps).

    Args:
        text: a predicted or reference answer.

    Returns:
        The normalised answer: lower-case tokens separated by single spaces.
    """
    lowered = text.lower()
    lowered = _THOUSANDS_RE.sub("", lowered)
    lowered = _DECIMAL_RE.sub(_DECIMAL_POINT, lowered)
    lowered = lowered.translate(_PUNCT_TABLE).replace(_DECIMAL_POINT, ".")
    lowered = _ARTICLES_RE.sub(" ", lowered)
    tokens = [_NUMBER_WORDS.get(token, token) for token in lowered.split()]
    if tokens and tokens[0] in _YES_NO:
        return tokens[0]
    return " ".join(tokens)


def exact_match(prediction: str, reference: str) -> bool:
    """Whether the two answers are equal after normalisation."""
    return normalise_answer(prediction) == normalise_answer(reference)


def token_f1(prediction: str, reference: str) -> float:
    """Token-level F1 between the normalised answers (HotpotQA convention).

    Returns 0.0 when either side normalises to nothing, or when one side is yes/no/noanswer
    and the two differ.
    """
    pred = normalise_answer(prediction)
    ref = normalise_answer(reference)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return 0.0
    pred_tokens = pred.split()
    ref_tokens = ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, slots=True)
class AnswerScore:
    """Exact match, token F1 and soft correctness of one answer.

    Attributes:
        em: exact match after normalisation.
        f1: token F1 in [0, 1].
        correct: ``em or f1 >= threshold``.
    """

    em: bool
    f1: float
    correct: bool


def score_answer(
    prediction: str, reference: str, *, f1_threshold: float = DEFAULT_F1_THRESHOLD
) -> AnswerScore:
    """Score one prediction against one reference answer.

    Args:
        prediction: the answer given.
        reference: the gold answer.
        f1_threshold: token F1 at or above which the answer counts as correct.

    Returns:
        The :class:`AnswerScore`.
    """
    em = exact_match(prediction, reference)
    f1 = token_f1(prediction, reference)
    return AnswerScore(em=em, f1=f1, correct=em or f1 >= f1_threshold)


def soft_correct(
    prediction: str, reference: str, *, f1_threshold: float = DEFAULT_F1_THRESHOLD
) -> bool:
    """Soft correctness: exact match or token F1 >= ``f1_threshold`` (SPEC 4.2.1)."""
    return score_answer(prediction, reference, f1_threshold=f1_threshold).correct
