"""The distinguishing facts of an answer, and where two answers' facts differ.

Token F1 counts words, so a sentence that differs from the reference in the one word that
matters still scores high: "The pet's name is Pickles." against "The pet's name is Pepper."
scores 0.8. The *distinguishing facts* of an answer are the words that carry such a fact,
read deterministically from its text:

- **time**: a clock time, "10:30", "3 pm", "3:15 p.m.", "noon", "midnight", written as
  24-hour ``HH:MM`` ("3 pm" and "15:00" are the same time);
- **date**: an ISO date "2026-03-05" (read as its month name, day and year) and a month or
  weekday name written with a capital ("March", "Tue");
- **number**: a number in digits or spelled ("three" -> 3, "1,000" -> 1000, "5th" -> 5);
- **name**: words written with a capital next to each other ("Pepper", "Steven Spielberg",
  'Maxim "Max" Bemis', "NASA"), without the common words of :data:`NOT_NAMES` ("The",
  "Your", "It", titles like "Dr": "Dr Lee" -> lee).

The question is deliberately not consulted: in a choice question ("Pepper or Pickles?") the
candidates are in the question and the answer's job is to name one of them.

Two answers' facts differ (:func:`fact_differences`) when a fact of the reference is absent
from the answer (*missing*), or when the answer states a time, date or number the reference
does not, of a kind the reference states (*conflicting*: "40 or 50 euros" against "40
euros"). A name the answer adds is not a conflict ("Steven Spielberg Jr" keeps
"Steven Spielberg"); a name the reference gives must be there: its last word and more than
half of its words, in any case ("Christopher Guest" states "Christopher Haden-Guest";
"Tampa Bay Rays" does not state "Tampa Bay Lightning"); the first of several words that open
a sentence counts as stated, since it may be the sentence's capital rather than the name's
("Booked Pepper for ..." is stated by "Pepper is booked ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from ._normalise import answer_tokens

__all__ = ["NOT_NAMES", "Fact", "FactDifferences", "distinguishing_facts", "fact_differences"]

_MONTHS: Final = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: A month or weekday name, or its usual abbreviation, as the full name.
_DATE_WORDS: Final[dict[str, str]] = {
    **{m: m for m in _MONTHS},
    **{m[:3]: m for m in _MONTHS},
    "sept": "september",
    **{d: d for d in _WEEKDAYS},
    **{d[:3]: d for d in _WEEKDAYS},
    **{d + "s": d for d in _WEEKDAYS},
    "tues": "tuesday",
    "thur": "thursday",
    "thurs": "thursday",
}

#: Capitalised words that are not names: function words that open a sentence, and titles.
NOT_NAMES: Final = frozenset((
    "a", "an", "the", "i", "i'm", "i've", "i'll", "it", "it's", "its", "this", "that", "these",
    "those", "there", "here", "he", "she", "they", "we", "you", "your", "yours", "our", "ours",
    "their", "theirs", "his", "her", "hers", "my", "mine", "me", "us", "them", "is", "are",
    "was", "were", "be", "been", "am", "yes", "no", "not", "nor", "and", "or", "but", "so",
    "if", "in", "on", "at", "to", "for", "of", "by", "with", "from", "as", "into", "about",
    "after", "before", "then", "than", "also", "what", "which", "who", "whom", "whose", "when",
    "where", "why", "how", "please", "thank", "thanks", "hi", "hello", "dear", "sure", "ok",
    "okay", "all", "both", "each", "every", "some", "any", "none", "do", "does", "did", "done",
    "can", "could", "will", "would", "shall", "should", "might", "must", "has", "have", "had",
    "let", "unfortunately", "however", "sorry", "great", "good", "note", "dr", "mr", "mrs",
    "ms", "mx", "prof", "sir", "madam",
))  # fmt: skip

_TIME_RE: Final = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap])\.?\s?m\b\.?"
    r"|\b(?P<h24>\d{1,2}):(?P<m24>\d{2})\b"
    r"|\b(?P<word>noon|midday|midnight)\b",
    re.IGNORECASE,
)
_ISO_DATE_RE: Final = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
#: A name: capitalised words next to each other, with quotes between them ('Maxim "Max" Bemis').
_NAME_RE: Final = re.compile(r"\b[A-Z][\w'’-]*(?:[\s\"“”]+[A-Z][\w'’-]*)*")
_WORD_SPLIT_RE: Final = re.compile(r"[\s\"“”]+")
#: What precedes a word that opens a sentence (nothing, or an end of sentence).
_SENTENCE_START_RE: Final = re.compile(r"(?:^|[.!?:;]['\"”’)]*)\s*$")
_POSSESSIVE_RE: Final = re.compile(r"['’]s?$")
_ORDINAL_RE: Final = re.compile(r"(\d+)(?:st|nd|rd|th)")
_NUMBER_RE: Final = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True, order=True)
class Fact:
    """One distinguishing fact.

    Attributes:
        kind: ``time``, ``date``, ``number`` or ``name``.
        value: its canonical text ("15:00", "march", "40", "pepper", "steven spielberg").
        opens_sentence: a name of several words that opens a sentence: its first word may be
            the sentence's capital rather than the name's ("Booked Pepper for ...").
    """

    kind: str
    value: str
    opens_sentence: bool = False

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


@dataclass(frozen=True, slots=True)
class FactDifferences:
    """Where an answer's distinguishing facts differ from the reference's.

    Attributes:
        missing: facts of the reference the answer does not state.
        conflicting: times, dates and numbers the answer states that the reference does not,
            of a kind the reference states.
    """

    missing: tuple[Fact, ...] = ()
    conflicting: tuple[Fact, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.missing or self.conflicting)


def _clock(match: re.Match[str]) -> str:
    word = match.group("word")
    if word is not None:
        return "00:00" if word.lower() == "midnight" else "12:00"
    if match.group("h24") is not None:
        return f"{int(match.group('h24')):02d}:{match.group('m24')}"
    hour, minute = int(match.group("h")), int(match.group("m") or 0)
    pm = match.group("ap").lower() == "p"
    hour = hour % 12 + (12 if pm else 0)
    return f"{hour:02d}:{minute:02d}"


def _number(token: str) -> str | None:
    ordinal = _ORDINAL_RE.fullmatch(token)
    if ordinal is not None:
        token = ordinal.group(1)
    if not _NUMBER_RE.fullmatch(token):
        return None
    try:
        value = Decimal(token)
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        return None
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


def distinguishing_facts(text: str) -> frozenset[Fact]:
    """The distinguishing facts of ``text`` (see the module docstring for what counts)."""
    facts: set[Fact] = set()

    def take_time(match: re.Match[str]) -> str:
        facts.add(Fact("time", _clock(match)))
        return " "

    def take_date(match: re.Match[str]) -> str:
        year, month, day = (int(g) for g in match.groups())
        if 1 <= month <= 12:
            facts.add(Fact("date", _MONTHS[month - 1]))
        facts.update((Fact("number", str(year)), Fact("number", str(day))))
        return " "

    rest = _ISO_DATE_RE.sub(take_date, text)
    rest = _TIME_RE.sub(take_time, rest)
    for token in answer_tokens(rest):
        number = _number(token)
        if number is not None:
            facts.add(Fact("number", number))
    for match in _NAME_RE.finditer(rest):
        name: list[str] = []
        words = _WORD_SPLIT_RE.split(match.group())
        opens = len(words) > 1 and bool(_SENTENCE_START_RE.search(rest[: match.start()]))
        for written in words:
            word = _POSSESSIVE_RE.sub("", written)
            if not word or word.lower() in NOT_NAMES:
                continue
            for token in answer_tokens(word):
                if token in _DATE_WORDS:
                    facts.add(Fact("date", _DATE_WORDS[token]))
                elif _number(token) is None and token not in NOT_NAMES:
                    name.append(token)
        if name:
            facts.add(Fact("name", " ".join(name), opens and len(name) > 1))
    return frozenset(facts)


def _stated(fact: Fact, answer_facts: frozenset[Fact], tokens: set[str]) -> bool:
    """Whether an answer with these facts and (normalised) words states ``fact``.

    A name is stated when its last word and more than half of its words are ("Max Bemis"
    states "Maxim Max Bemis"; "Kauffman Stadium" does not state "Arrowhead Stadium"), in any
    case; a month or weekday also when written in lower case.
    """
    if fact.kind == "name":
        words = fact.value.split()
        present = sum(w in tokens for w in words[fact.opens_sentence :]) + fact.opens_sentence
        return words[-1] in tokens and 2 * present > len(words)
    if fact.kind == "date" and fact.value in {_DATE_WORDS.get(t) for t in tokens}:
        return True
    return fact in answer_facts


def fact_differences(prediction: str, reference: str) -> FactDifferences:
    """Where the distinguishing facts of ``prediction`` differ from ``reference``'s.

    Args:
        prediction: the answer given.
        reference: the reference answer.

    Returns:
        The missing and conflicting facts (empty, and false, when the facts agree).
    """
    ref = distinguishing_facts(reference)
    got = distinguishing_facts(prediction)
    tokens = set(answer_tokens(prediction))
    missing = tuple(sorted(f for f in ref if not _stated(f, got, tokens)))
    kinds = {f.kind for f in ref} - {"name"}
    conflicting = tuple(sorted(f for f in got if f.kind in kinds and f not in ref))
    return FactDifferences(missing, conflicting)
