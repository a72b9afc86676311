"""Pair labels: the deterministic pre-filters and the offline baseline labeller.

Every pair of answers to a question is first offered to the pre-filters, which decide the pairs
whose label is certain without a judge:

* ``both-absent`` / ``one-absent``: a source does not address the question -> ``absent``;
* ``identical``: the answer texts are equal after normalisation -> ``consistent``;
* ``opposite-stances``: one says yes, the other no -> ``contradictory``;
* ``conflicting-numbers``: the answers say the same words around their quantities and a
  quantity differs (``within 30 days`` / ``within 60 days``) -> ``contradictory``.

A quantity is a number that is not part of a name or an identifier (``COVID-19``, ``GPT-4``,
``ISO 9001``, ``Windows 10``, ``Section 3``, a version ``3.11.2`` are words, not quantities),
typed as a year (a four-digit 1000-2099 with no unit after it) or a count with its unit
(``12 months`` equals ``1 year``, ``5 kg`` equals ``5000 g``, ``40%`` equals ``40 percent``);
a year is never compared with a count. Comparing every number of two answers decides wrongly
on real multi-source text: measured on RAMDocs (multi-document answers with per-document
gold, ``benchmarks/audit_prefilters.py``), two sources that name different numbers are far more
often about different subjects (two towns called Broken Bow) than in contradiction. Only the
same words around the quantities tie the two answers to one subject, and a rule decides only
where its measured precision holds :data:`MIN_PRECISION` (:data:`PREFILTER_PRECISION`).

The rest go to a labeller: the :func:`baseline_label` (offline, deterministic: equal stance
and points -> consistent, one's points a subset of the other's -> complementary, otherwise
divergent) or a pair judge.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, Literal

import msgspec

from ._model import Answer, Label, PairLabel, Significance
from ._quantities import template

__all__ = [
    "MIN_CONTEXT_WORDS",
    "MIN_PRECISION",
    "PREFILTER_PRECISION",
    "PREFILTER_RULES",
    "answer_pairs",
    "baseline_label",
    "conflicting_quantities",
    "gold_pair_labels",
    "make_label",
    "normalise",
    "prefilter",
    "prefilter_rule",
    "rule_decides",
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
#: Lowest measured precision at which a rule may decide a pair.
MIN_PRECISION: Final = 0.95
#: ``rule -> (precision, pairs it fired on)`` measured on real multi-source text: the shipped
#: 200-question RAMDocs sample, each document's answer the sentence holding it
#: (``benchmarks/audit_prefilters.py``; on all 500 questions conflicting-numbers fires on 24
#: pairs with precision 0.125: different numbers in the same words are mostly two subjects
#: of one name, such as two towns' populations). None: the rule defines its label (an absent
#: stance is ``absent``, yes against no ``contradictory``), so its precision is the stances'.
PREFILTER_PRECISION: Final[dict[str, tuple[float | None, int]]] = {
    "both-absent": (None, 0),
    "one-absent": (None, 0),
    "identical": (1.0, 21),
    "opposite-stances": (None, 0),
    "conflicting-numbers": (0.429, 7),
}
#: Fewest words besides the quantities the two answers must share for ``conflicting-numbers``
#: (below it, as with two bare numbers, the answers need not be about one subject).
MIN_CONTEXT_WORDS: Final = 2
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


def conflicting_quantities(a: str, b: str) -> bool:
    """Whether two answer texts say the same words around their quantities (at least
    :data:`MIN_CONTEXT_WORDS` of them) and a quantity of one kind differs."""
    template_a, values_a = template(a)
    template_b, values_b = template(b)
    if not values_a or template_a != template_b:
        return False
    if sum(not w.startswith("<") for w in template_a.split()) < MIN_CONTEXT_WORDS:
        return False
    return any(
        not math.isclose(x[1], y[1], rel_tol=1e-9) for x, y in zip(values_a, values_b, strict=True)
    )


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


def _rule_label(rule: str, a: Answer, b: Answer) -> Label | None:
    """The label ``rule`` gives the pair, None where it does not fire."""
    absent = (a.stance == "absent") + (b.stance == "absent")
    if rule == "both-absent":
        return "absent" if absent == 2 else None
    if rule == "one-absent":
        return "absent" if absent == 1 else None
    if rule == "identical":
        return "consistent" if normalise(a.text) == normalise(b.text) else None
    if rule == "opposite-stances":
        return "contradictory" if {a.stance, b.stance} == {"yes", "no"} else None
    if rule == "conflicting-numbers":
        return "contradictory" if conflicting_quantities(a.text, b.text) else None
    raise ValueError(f"unknown pre-filter rule {rule!r}")


def prefilter_rule(rule: str, a: Answer, b: Answer, topic: str) -> PairLabel | None:
    """The label one rule alone gives the pair, whatever its measured precision (None: it
    does not fire); what a precision measurement runs."""
    label = _rule_label(rule, a, b)
    return None if label is None else make_label(a, b, label, topic, f"prefilter:{rule}")


def rule_decides(rule: str) -> bool:
    """Whether ``rule`` may decide pairs: its measured precision (see
    :data:`PREFILTER_PRECISION`) holds :data:`MIN_PRECISION`, or it defines its label."""
    precision = PREFILTER_PRECISION[rule][0]
    return precision is None or precision >= MIN_PRECISION


def prefilter(a: Answer, b: Answer, topic: str) -> PairLabel | None:
    """The label of a pair whose label is certain, else None (a labeller must decide): the
    first of :data:`PREFILTER_RULES` that fires among those that may decide."""
    for rule in PREFILTER_RULES:
        if rule_decides(rule) and (label := prefilter_rule(rule, a, b, topic)) is not None:
            return label
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
