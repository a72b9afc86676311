"""Pair labels: the deterministic pre-filters and the offline baseline labeller.

Every pair of answers to a question is first offered to the pre-filters, which decide the pairs
whose label is certain without a judge:

* ``both-absent`` / ``one-absent``: a source does not address the question -> ``absent``;
* ``identical``: the answer texts are equal after normalisation -> ``consistent``;
* ``opposite-stances``: one says yes, the other no -> ``contradictory``;
* ``conflicting-numbers``: both state numbers and they share none -> ``contradictory``.

The rest go to a labeller: the :func:`baseline_label` (offline, deterministic: equal stance
and points -> consistent, one's points a subset of the other's -> complementary, otherwise
divergent) or a pair judge.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, Literal

import msgspec

from ._model import Answer, Label, PairLabel, Significance

__all__ = [
    "PREFILTER_RULES",
    "answer_pairs",
    "baseline_label",
    "gold_pair_labels",
    "make_label",
    "normalise",
    "prefilter",
    "significance_of",
]

#: The pre-filter rules, in the order they are tried.
PREFILTER_RULES: Final = (
    "both-absent",
    "one-absent",
    "identical",
    "opposite-stances",
    "conflicting-numbers",
)
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)?")
_NON_WORD: Final = re.compile(r"[^\w]+")
_SIGNIFICANCE: Final[dict[Label, Significance]] = {
    "contradictory": "high",
    "divergent": "medium",
    "complementary": "low",
}


def normalise(text: str) -> str:
    """Case-folded, accent-stripped words joined by single spaces."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def significance_of(label: Label) -> Significance | None:
    """Default significance of a label: contradictory high, divergent medium, complementary
    low, none for consistent and absent pairs."""
    return _SIGNIFICANCE.get(label)


def _numbers(answer: Answer) -> set[str]:
    return {n.replace(",", ".") for n in _NUMBER.findall(answer.text)}


def make_label(
    a: Answer,
    b: Answer,
    label: Label,
    topic: str,
    decided_by: str,
    significance: Significance | Literal["default"] | None = "default",
) -> PairLabel:
    """The label of the pair (a, b); topic and significance only where the answers differ
    (``"default"``: :func:`significance_of` the label)."""
    differs = label not in ("absent", "consistent")
    if significance == "default":
        significance = significance_of(label)
    return PairLabel(
        question_id=a.question_id,
        source_a=a.source_id,
        source_b=b.source_id,
        label=label,
        topic=topic if differs else None,
        significance=significance if differs else None,
        decided_by=decided_by,
    )


def prefilter(a: Answer, b: Answer, topic: str) -> PairLabel | None:
    """The label of a pair whose label is certain, else None (a labeller must decide)."""
    absent = (a.stance == "absent") + (b.stance == "absent")
    if absent == 2:
        return make_label(a, b, "absent", topic, "prefilter:both-absent")
    if absent == 1:
        return make_label(a, b, "absent", topic, "prefilter:one-absent")
    if normalise(a.text) == normalise(b.text):
        return make_label(a, b, "consistent", topic, "prefilter:identical")
    if {a.stance, b.stance} == {"yes", "no"}:
        return make_label(a, b, "contradictory", topic, "prefilter:opposite-stances")
    numbers_a, numbers_b = _numbers(a), _numbers(b)
    if numbers_a and numbers_b and not numbers_a & numbers_b:
        return make_label(a, b, "contradictory", topic, "prefilter:conflicting-numbers")
    return None


def baseline_label(a: Answer, b: Answer, topic: str) -> PairLabel:
    """The offline baseline label of a pair the pre-filters left open."""
    if (decided := prefilter(a, b, topic)) is not None:
        return decided
    points_a, points_b = set(a.points), set(b.points)
    label: Label
    if a.stance == b.stance and points_a == points_b:
        label = "consistent"
    elif a.stance == b.stance and (points_a <= points_b or points_b <= points_a):
        label = "complementary"
    else:
        label = "divergent"
    return make_label(a, b, label, topic, "baseline")


def answer_pairs(answers: Sequence[Answer]) -> Iterator[tuple[Answer, Answer]]:
    """Every unordered pair of the answers to one question, ordered by source id."""
    ordered = sorted(answers, key=lambda x: x.source_id)
    return itertools.combinations(ordered, 2)


def gold_pair_labels(gold: Iterable[Answer], topics: dict[str, str]) -> list[PairLabel]:
    """Gold pair labels: the baseline rules applied to the gold answers of each question.

    Args:
        gold: gold answers.
        topics: question id -> its topic (the first of its topics).
    """
    by_question: dict[str, list[Answer]] = {}
    for answer in gold:
        by_question.setdefault(answer.question_id, []).append(answer)
    out: list[PairLabel] = []
    for question_id, answers in by_question.items():
        for a, b in answer_pairs(answers):
            label = baseline_label(a, b, topics[question_id])
            out.append(msgspec.structs.replace(label, decided_by="gold"))
    return out
