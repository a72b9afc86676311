"""Target selection priority and the random-target control (SPEC 4.2), on the replay's chunks."""

from __future__ import annotations

from collections import Counter

import pytest

from groundtrace.analyzer import interventions
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.interventions._targets import (
    TargetRule,
    by_rank,
    random_target,
    select_target,
)
from groundtrace.analyzer.replay import ReplayChunk

R = [
    ReplayChunk("a", "Alpha", rank=0),
    ReplayChunk("b", "Beta", rank=1),
    ReplayChunk("c", "Gamma", rank=2),
    ReplayChunk("d", "Beta", rank=3),
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


def test_a_chunk_without_a_rank_ranks_by_its_position_in_r() -> None:
    unranked = [ReplayChunk("p", "P"), ReplayChunk("q", "Q"), ReplayChunk("r", "R", rank=1)]
    # p -> position 0, q -> position 1, r -> rank 1: ties keep the order of R
    assert [c.id for c in by_rank(unranked)] == ["p", "q", "r"]
    shuffled = [unranked[2], unranked[1], unranked[0]]  # r -> rank 1, q -> 1, p -> 2
    assert [c.id for c in by_rank(shuffled)] == ["r", "q", "p"]
    assert select_target([unranked[1], unranked[0]], set(), set()).chunk.id == "q"
    choice = select_target(unranked, {"r"}, set())
    assert choice.chunk is unranked[2]  # the target is R's own record, rank left unknown
    assert (choice.rule, choice.chunk.rank) == (TargetRule.USED, 1)
    assert select_target(unranked, set(), set()).chunk.rank is None


def test_evidence_chunk_is_the_deprecated_name_of_replay_chunk() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r"interventions\.EvidenceChunk is deprecated since groundtrace 0\.2\.0 and is "
        r"removed in 0\.3\.0: "
        r"use groundtrace\.analyzer\.replay\.ReplayChunk$",
    ):
        old = interventions.EvidenceChunk
    assert old is ReplayChunk
    assert old("a", "Alpha", "text", 3) == ReplayChunk("a", "Alpha", content="text", rank=3)
    assert "EvidenceChunk" not in interventions.__all__
