"""Replacement pool of the REPLACE operator and its hardness levels (SPEC 4.2).

Candidates are chunks retrieved for q beyond the top-k (or the case's distractors). Excluded,
with the reason recorded: chunks already in R (same id), chunks whose title is a gold
supporting title (in S), and repeated candidate ids.

Each surviving candidate is scored on two dimensions:

* **similarity** to the target e_i -- token Jaccard similarity of the lower-cased word sets;
* **relevance** to the query q -- BM25 (Okapi, ``rank_bm25``) score of the candidate for q,
  with the pool itself as the corpus.

On each dimension the pool is cut at its terciles (``numpy.quantile`` at 1/3 and 2/3):
score <= first cut is ``easy``, <= second cut ``medium``, above it ``hard`` (more similar or
more relevant = harder to tell apart). Equal scores therefore share a level; a pool whose
scores are all equal is entirely ``easy``. :func:`choose_replacement` picks uniformly within
the requested cell with a generator seeded by ``(seed, item key)``, and returns ``None`` --
never a candidate of another level -- when the cell is empty.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from rank_bm25 import BM25Okapi

from groundtrace.analyzer._evidence_match import GoldSupport
from groundtrace.analyzer.replay import ReplayChunk

from ._targets import _key_entropy

__all__ = [
    "Hardness",
    "PoolCandidate",
    "ReplacementPool",
    "build_replacement_pool",
    "choose_replacement",
]

_WORD = re.compile(r"\w+")

SIMILARITY_METHOD = "token Jaccard similarity to the target"
RELEVANCE_METHOD = "BM25Okapi score for the query over the pool"


class Hardness(StrEnum):
    """Tercile level on one dimension."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


@dataclass(frozen=True, slots=True)
class PoolCandidate:
    """A candidate with its scores and levels.

    Attributes:
        chunk: the candidate, as the replay shows it in place of the target.
        similarity: token Jaccard similarity to the target.
        relevance: BM25 score for the query over the pool.
        similarity_level: tercile level of ``similarity``.
        relevance_level: tercile level of ``relevance``.
    """

    chunk: ReplayChunk
    similarity: float
    relevance: float
    similarity_level: Hardness
    relevance_level: Hardness


@dataclass(frozen=True, slots=True)
class ReplacementPool:
    """The replacement pool of one target.

    Attributes:
        target_id: id of e_i.
        candidates: surviving candidates in input order.
        excluded: candidate id -> reason for exclusion.
        similarity_cuts: tercile cut points of similarity (``None`` when the pool is empty).
        relevance_cuts: tercile cut points of relevance.
        similarity_method: how similarity was scored.
        relevance_method: how relevance was scored.
    """

    target_id: str
    candidates: tuple[PoolCandidate, ...]
    excluded: Mapping[str, str] = field(default_factory=dict, hash=False)
    similarity_cuts: tuple[float, float] | None = None
    relevance_cuts: tuple[float, float] | None = None
    similarity_method: str = SIMILARITY_METHOD
    relevance_method: str = RELEVANCE_METHOD


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _jaccard_similarity(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _levels(scores: np.ndarray) -> tuple[list[Hardness], tuple[float, float]]:
    low, high = (float(x) for x in np.quantile(scores, [1 / 3, 2 / 3]))
    levels = [
        Hardness.EASY if s <= low else Hardness.MEDIUM if s <= high else Hardness.HARD
        for s in scores
    ]
    return levels, (low, high)


def build_replacement_pool(
    target: ReplayChunk,
    query: str,
    candidates: Sequence[ReplayChunk],
    evidence: Sequence[ReplayChunk],
    support_titles: Collection[str],
) -> ReplacementPool:
    """Filter the candidates and score them on similarity and relevance.

    Args:
        target: e_i, the chunk to be replaced.
        query: q.
        candidates: chunks beyond the top-k, or the case's distractors (their ranks are
            not read: the pool keeps the input order).
        evidence: R (its ids are excluded; ``target`` is normally one of them).
        support_titles: S (chunks whose id or title matches an entry are excluded).
    """
    in_r = {c.id for c in evidence} | {target.id}
    gold = GoldSupport(support_titles)
    excluded: dict[str, str] = {}
    kept: list[ReplayChunk] = []
    seen: set[str] = set()
    for chunk in candidates:
        if chunk.id in in_r:
            excluded[chunk.id] = "already in the evidence set R"
        elif gold.matches(chunk.title):
            excluded[chunk.id] = "title is a gold supporting title"
        elif gold.matches(chunk.id):
            excluded[chunk.id] = "id is a gold support entry"
        elif chunk.id in seen:
            excluded.setdefault(chunk.id, "repeated candidate id")
        else:
            kept.append(chunk)
            seen.add(chunk.id)
    if not kept:
        return ReplacementPool(target.id, (), excluded)
    docs = [_tokens(c.content) for c in kept]
    target_words = set(_tokens(target.content))
    similarity = np.array([_jaccard_similarity(target_words, set(d)) for d in docs])
    relevance = np.asarray(BM25Okapi(docs).get_scores(_tokens(query)), dtype=np.float64)
    sim_levels, sim_cuts = _levels(similarity)
    rel_levels, rel_cuts = _levels(relevance)
    pool = tuple(
        PoolCandidate(c, float(s), float(r), sl, rl)
        for c, s, r, sl, rl in zip(kept, similarity, relevance, sim_levels, rel_levels, strict=True)
    )
    return ReplacementPool(target.id, pool, excluded, sim_cuts, rel_cuts)


def choose_replacement(
    pool: ReplacementPool,
    similarity: Hardness | None,
    relevance: Hardness | None,
    seed: int,
    key: str,
) -> PoolCandidate | None:
    """Pick a candidate of the requested levels, deterministically for ``(seed, key)``.

    Args:
        pool: the pool of the target.
        similarity: wanted similarity level, ``None`` for any.
        relevance: wanted relevance level, ``None`` for any.
        seed: recorded seed.
        key: stable item key (e.g. case id and target id).

    Returns:
        The candidate, or ``None`` when no candidate has the requested levels.
    """
    cell = sorted(
        (
            c
            for c in pool.candidates
            if (similarity is None or c.similarity_level == similarity)
            and (relevance is None or c.relevance_level == relevance)
        ),
        key=lambda c: c.chunk.id,
    )
    if not cell:
        return None
    rng = np.random.default_rng([seed, _key_entropy(key)])
    return cell[int(rng.integers(len(cell)))]
