"""Target selection priority and the random-target control (SPEC 4.2)."""

from __future__ import annotations

from collections import Counter

import pytest

from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.interventions import EvidenceChunk, TargetRule
from groundtrace.analyzer.interventions._targets import random_target, select_target

R = [
    EvidenceChunk("a", "Alpha", rank=0),
    EvidenceChunk("b", "Beta", rank=1),
    EvidenceChunk("c", "Gamma", rank=2),
    EvidenceChunk("d", "Beta", rank=3),
]


@pytest.mark.parametrize(
    ("used", "gold", "expected", "rule"),
    [
        ({"c", "d"}, {"Beta"}, "d", TargetRule.USED_AND_GOLD),
        ({"b", "d"}, {"Beta"}, "b", TargetRule.USED_AND_GOLD),  # tie -> better rank
        ({"c", "d"}, {"Alpha"}, "c", TargetRule.USED),
        (set(), {"Beta"}, "b", TargetRule.GOLD),
        (set(), set(), "a", TargetRule.TOP_RANKED),
        ({"zz"}, {"Nothing"}, "a", TargetRule.TOP_RANKED),
    ],
)
def test_priority(used: set[str], gold: set[str], expected: str, rule: TargetRule) -> None:
    choice = select_target(list(reversed(R)), used, gold)  # input order must not matter
    assert (choice.chunk.id, choice.rule) == (expected, rule)


def test_empty_evidence_fails_closed() -> None:
    with pytest.raises(InputError):
        select_target([], set(), set())


def test_random_target_is_seeded_per_item_and_uniform() -> None:
    first = random_target(R, seed=42, key="case-1")
    assert first == random_target(list(reversed(R)), seed=42, key="case-1")
    assert first.rule is TargetRule.RANDOM and first.seed == 42
    counts = Counter(random_target(R, 42, f"case-{i}").chunk.id for i in range(4000))
    assert set(counts) == {"a", "b", "c", "d"}
    assert all(850 <= v <= 1150 for v in counts.values())  # 1000 expected, sd ~27
