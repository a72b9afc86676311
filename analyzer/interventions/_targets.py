"""Which evidence chunk an intervention targets (SPEC 4.2).

Priority, first non-empty group wins, ties broken by retrieval rank (lower rank first):

1. used by the model (in U) **and** it matches a gold entry of S (its id or title, the one
   evidence-matching rule of :mod:`groundtrace.analyzer._evidence_match`);
2. any used chunk;
3. matches S;
4. the highest-ranked chunk.

The chunks are the replay's evidence records
(:class:`~groundtrace.analyzer.replay.ReplayChunk`); a chunk whose retrieval rank is unknown
ranks by its 0-based position in R (:func:`by_rank`). The random-target control draws
uniformly from R with a generator seeded by ``(seed, stable hash of the item key)``, so a
resumed or reordered run draws the same target.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from groundtrace.analyzer._evidence_match import GoldSupport
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.replay import ReplayChunk

__all__ = ["TargetChoice", "TargetRule", "by_rank", "random_target", "select_target"]


def by_rank(evidence: Sequence[ReplayChunk]) -> list[ReplayChunk]:
    """R in rank order, lower first: a chunk's retrieval rank, else its 0-based position in R.

    The sort is stable, so chunks of equal rank keep their order in R.
    """
    ranked = sorted(
        enumerate(evidence),
        key=lambda item: item[0] if item[1].rank is None else item[1].rank,
    )
    return [chunk for _, chunk in ranked]


class TargetRule(StrEnum):
    """Why a target was chosen."""

    USED_AND_GOLD = "used_and_gold"
    USED = "used"
    GOLD = "gold"
    TOP_RANKED = "top_ranked"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class TargetChoice:
    """The chosen target and the rule that chose it.

    Attributes:
        chunk: the target e_i.
        rule: which priority level (or the random control) produced it.
        seed: the seed of the random control, ``None`` for the priority rule.
    """

    chunk: ReplayChunk
    rule: TargetRule
    seed: int | None = None


def _ranked(evidence: Sequence[ReplayChunk]) -> list[ReplayChunk]:
    if not evidence:
        raise InputError("the evidence set R is empty: no target to intervene on", field="R")
    return by_rank(evidence)


def select_target(
    evidence: Sequence[ReplayChunk],
    used_ids: Collection[str],
    support_titles: Collection[str],
) -> TargetChoice:
    """Pick the target by the SPEC priority (see the module docstring).

    Args:
        evidence: R, the retrieved chunks.
        used_ids: U, ids the model used.
        support_titles: S, gold supporting titles or ids (may be empty).

    Raises:
        InputError: ``evidence`` is empty.
    """
    ranked = _ranked(evidence)
    used, gold = set(used_ids), GoldSupport(support_titles)
    in_gold = [c for c in ranked if gold.matches(c.id, c.title)]
    groups = (
        (TargetRule.USED_AND_GOLD, [c for c in in_gold if c.id in used]),
        (TargetRule.USED, [c for c in ranked if c.id in used]),
        (TargetRule.GOLD, in_gold),
    )
    for rule, group in groups:
        if group:
            return TargetChoice(group[0], rule)
    return TargetChoice(ranked[0], TargetRule.TOP_RANKED)


def _key_entropy(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def random_target(evidence: Sequence[ReplayChunk], seed: int, key: str) -> TargetChoice:
    """Random-target control: a chunk drawn uniformly from R.

    Args:
        evidence: R.
        seed: the recorded seed of the control.
        key: a stable item key (e.g. the case id); combined with ``seed``.

    Raises:
        InputError: ``evidence`` is empty.
    """
    ranked = _ranked(evidence)
    rng = np.random.default_rng([seed, _key_entropy(key)])
    return TargetChoice(ranked[int(rng.integers(len(ranked)))], TargetRule.RANDOM, seed)
