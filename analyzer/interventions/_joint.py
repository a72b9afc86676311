"""Joint ablation of gold supporting chunks and their Shapley values (SPEC 4.2.4).

For items whose two gold supporting chunks s1, s2 are both in R, with F1 the token F1 of the
answer against the reference:

* drop_1 = F1(R) - F1(R \\ {s1}), drop_2 likewise, drop_joint = F1(R) - F1(R \\ {s1, s2});
* synergy = drop_joint - (drop_1 + drop_2);
* positive synergy: synergy > tol;
* strong complementarity: drop_1 <= tol and drop_2 <= tol and drop_joint > tol (neither
  single removal lowers F1, the joint removal does). ``tol`` (1e-9) only absorbs rounding.

Beyond pairs, :func:`shapley_values` gives exact Shapley values of k <= 5 support chunks
from a value function v(subset) over all 2**k subsets (the caller supplies F1 per subset).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from groundtrace.analyzer._evidence_match import GoldSupport
from groundtrace.analyzer._shapley import coalitions, shapley
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.replay import ReplayChunk
from groundtrace.analyzer.stats import DeltaSummary, StatsSettings, summarise_deltas

from ._targets import by_rank

__all__ = [
    "MAX_SHAPLEY_PLAYERS",
    "JointItem",
    "JointSummary",
    "joint_support_pair",
    "shapley_values",
    "summarise_joint",
]

#: Largest number of support chunks for exact Shapley values (SPEC: k <= 5).
MAX_SHAPLEY_PLAYERS = 5
_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class JointItem:
    """F1 of one item with all evidence, without s1, without s2 and without both."""

    f1_full: float
    f1_without_first: float
    f1_without_second: float
    f1_without_both: float

    @property
    def drop_first(self) -> float:
        """F1 drop when s1 is removed."""
        return self.f1_full - self.f1_without_first

    @property
    def drop_second(self) -> float:
        """F1 drop when s2 is removed."""
        return self.f1_full - self.f1_without_second

    @property
    def drop_joint(self) -> float:
        """F1 drop when both are removed."""
        return self.f1_full - self.f1_without_both

    @property
    def synergy(self) -> float:
        """drop_joint - (drop_1 + drop_2)."""
        return self.drop_joint - (self.drop_first + self.drop_second)

    @property
    def strong_complementarity(self) -> bool:
        """Neither single removal lowers F1 but the joint removal does."""
        return self.drop_first <= _TOL and self.drop_second <= _TOL and self.drop_joint > _TOL


class JointSummary(msgspec.Struct, frozen=True):
    """Joint-ablation statistics over items (each with CI, seed and B recorded)."""

    n: int
    mean_drop_first: DeltaSummary
    mean_drop_second: DeltaSummary
    mean_drop_joint: DeltaSummary
    mean_synergy: DeltaSummary
    positive_synergy_rate: DeltaSummary
    strong_complementarity_rate: DeltaSummary


def summarise_joint(items: Sequence[JointItem], stats: StatsSettings | None = None) -> JointSummary:
    """Mean drops, mean synergy and the two rates, with paired bootstrap CIs."""
    vectors = {
        "drop_first": [i.drop_first for i in items],
        "drop_second": [i.drop_second for i in items],
        "drop_joint": [i.drop_joint for i in items],
        "synergy": [i.synergy for i in items],
        "positive_synergy": [float(i.synergy > _TOL) for i in items],
        "strong_complementarity": [float(i.strong_complementarity) for i in items],
    }
    s = summarise_deltas(vectors, stats)
    return JointSummary(
        n=len(items),
        mean_drop_first=s["drop_first"],
        mean_drop_second=s["drop_second"],
        mean_drop_joint=s["drop_joint"],
        mean_synergy=s["synergy"],
        positive_synergy_rate=s["positive_synergy"],
        strong_complementarity_rate=s["strong_complementarity"],
    )


def joint_support_pair(
    evidence: Sequence[ReplayChunk], support_titles: Collection[str]
) -> tuple[ReplayChunk, ReplayChunk] | None:
    """The two gold supporting chunks in R (best-ranked chunk of each of two gold entries,
    matched by id or title; a chunk of unknown rank ranks by its position in R).

    Returns:
        ``(s1, s2)`` ordered by rank, or ``None`` when fewer than two distinct gold entries
        are matched in R (the item is not eligible for joint ablation).
    """
    gold = GoldSupport(support_titles)
    by_entry: dict[str, ReplayChunk] = {}
    for chunk in by_rank(evidence):
        entry = gold.match(chunk.id, chunk.title)
        if entry is not None and entry not in by_entry:
            by_entry[entry] = chunk
    if len(by_entry) < 2:
        return None
    first, second = list(by_entry.values())[:2]
    return first, second


def shapley_values(
    players: Sequence[str],
    value: Mapping[frozenset[str], float] | Callable[[frozenset[str]], float],
) -> dict[str, float]:
    """Exact Shapley values of up to :data:`MAX_SHAPLEY_PLAYERS` players.

    ``phi_i = sum over S not containing i of |S|! (k - |S| - 1)! / k! * (v(S + i) - v(S))``,
    so ``sum(phi) == v(all) - v(empty)`` (efficiency).

    Args:
        players: the support chunk ids (distinct).
        value: v(subset), as a mapping over all ``2**k`` subsets or a function.

    Raises:
        InputError: more than 5 players, repeated players, or a subset missing from the
            mapping.
    """
    k = len(players)
    if k > MAX_SHAPLEY_PLAYERS:
        raise InputError(f"exact Shapley values need k <= 5 players, got {k}", field="players")
    if len(set(players)) != k:
        raise InputError("players must be distinct", field="players")
    subsets = [frozenset(p for p, kept in zip(players, c, strict=True) if kept)
               for c in coalitions(k)]  # fmt: skip
    if callable(value):
        return dict(zip(players, shapley([value(s) for s in subsets]), strict=True))
    absent = [sorted(s) for s in subsets if s not in value]
    if absent:
        raise InputError(f"value missing for subsets {absent}", field="value")
    return dict(zip(players, shapley([value[s] for s in subsets]), strict=True))
