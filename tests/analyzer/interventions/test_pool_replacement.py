"""Replacement pool: exclusions, hardness levels, seeded choice (SPEC 4.2 REPLACE)."""

from __future__ import annotations

import json
import re

from rank_bm25 import BM25Okapi

from groundtrace.analyzer.interventions._joint import joint_support_pair
from groundtrace.analyzer.interventions._pool import (
    Hardness,
    build_replacement_pool,
    choose_replacement,
)
from groundtrace.analyzer.interventions._targets import select_target
from groundtrace.analyzer.replay import ReplayChunk
from tests.support.data import HOTPOT

TARGET = ReplayChunk("t", "Eiffel Tower", "the eiffel tower is a wrought iron tower in paris", 0)
R = [TARGET, ReplayChunk("r2", "Paris", "paris is the capital of france", 1)]
QUERY = "how tall is the eiffel tower in paris"
CANDIDATES = [
    ReplayChunk("r2", "Paris", "paris is the capital of france", 1),  # in R
    ReplayChunk("g1", "Gustave Eiffel", "gustave eiffel built the tower", 6),  # gold title
    ReplayChunk("k1", "Tokyo Tower", "tokyo tower is a lattice tower in tokyo", 7),
    ReplayChunk("k2", "Iron", "iron is a chemical element", 8),
    ReplayChunk("k3", "Blackpool Tower", "blackpool tower is a wrought iron tower", 9),
    ReplayChunk("k4", "Bananas", "bananas are yellow fruit", 10),
    ReplayChunk("k5", "Paris tower", "the eiffel tower in paris is tall", 11),
    ReplayChunk("k6", "Cheese", "cheese is made from milk", 12),
    ReplayChunk("k2", "Iron", "iron is a chemical element", 8),  # repeated
]


def test_exclusion_rules() -> None:
    pool = build_replacement_pool(TARGET, QUERY, CANDIDATES, R, {"Gustave Eiffel"})
    ids = [c.chunk.id for c in pool.candidates]
    assert ids == ["k1", "k2", "k3", "k4", "k5", "k6"]
    assert pool.excluded == {
        "r2": "already in the evidence set R",
        "g1": "title is a gold supporting title",
        "k2": "repeated candidate id",
    }
    assert pool.candidates[0].chunk is CANDIDATES[2]  # the replay shows the candidate as it is


def test_hardness_levels_follow_similarity_and_relevance() -> None:
    pool = build_replacement_pool(TARGET, QUERY, CANDIDATES, R, {"Gustave Eiffel"})
    by_id = {c.chunk.id: c for c in pool.candidates}
    assert by_id["k5"].similarity_level is Hardness.HARD  # shares most words with e_i
    assert by_id["k5"].relevance_level is Hardness.HARD  # matches the query best
    assert by_id["k4"].similarity_level is Hardness.EASY
    assert by_id["k4"].relevance_level is Hardness.EASY  # no word of the query
    assert by_id["k4"].relevance == 0.0
    assert max(pool.candidates, key=lambda c: c.relevance).chunk.id == "k5"
    assert by_id["k3"].similarity > by_id["k1"].similarity > by_id["k2"].similarity
    assert pool.similarity_cuts is not None and pool.relevance_cuts is not None


def test_choice_is_deterministic_by_level_and_seed() -> None:
    pool = build_replacement_pool(TARGET, QUERY, CANDIDATES, R, {"Gustave Eiffel"})
    a = choose_replacement(pool, Hardness.EASY, None, seed=42, key="case-1/t")
    assert a is not None and a.similarity_level is Hardness.EASY
    assert a == choose_replacement(pool, Hardness.EASY, None, seed=42, key="case-1/t")
    hard = choose_replacement(pool, Hardness.HARD, Hardness.HARD, seed=0, key="x")
    assert hard is not None and hard.chunk.id == "k5"
    picks = {choose_replacement(pool, None, None, 7, f"k{i}").chunk.id for i in range(60)}  # type: ignore[union-attr]
    assert len(picks) > 1


def test_empty_cell_and_empty_pool_return_none() -> None:
    only_r = build_replacement_pool(TARGET, QUERY, R, R, set())
    assert only_r.candidates == () and only_r.similarity_cuts is None
    assert choose_replacement(only_r, None, None, 1, "k") is None
    pool = build_replacement_pool(TARGET, QUERY, CANDIDATES[2:4], R, set())
    cells = [choose_replacement(pool, s, r, 1, "k") for s in Hardness for r in Hardness]
    assert sum(c is not None for c in cells) <= 2


def test_pool_on_real_hotpotqa_distractor_items() -> None:
    """BM25 top-5 of the 10 HotpotQA paragraphs as R, the other 5 as candidates."""
    with HOTPOT.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(40), fh, strict=False)]
    eligible = 0
    for row in rows:
        chunks = [
            ReplayChunk(f"{row['_id']}:{i}", title, "".join(sentences), i)
            for i, (title, sentences) in enumerate(row["context"])
        ]
        scores = BM25Okapi([re.findall(r"\w+", c.content.lower()) for c in chunks]).get_scores(
            re.findall(r"\w+", row["question"].lower())
        )
        order = sorted(range(len(chunks)), key=lambda i: -scores[i])
        ranked = [
            ReplayChunk(chunks[i].id, chunks[i].title, chunks[i].content, r)
            for r, i in enumerate(order)
        ]
        evidence, beyond = ranked[:5], ranked[5:]
        gold = {title for title, _ in row["supporting_facts"]}
        target = select_target(evidence, set(), gold).chunk
        pool = build_replacement_pool(target, row["question"], beyond, evidence, gold)
        for c in pool.candidates:
            assert c.chunk.title not in gold
            assert c.chunk.id not in {e.id for e in evidence}
        assert len(pool.candidates) + len(pool.excluded) == len(beyond)
        assert all(reason.startswith("title is a gold") for reason in pool.excluded.values())
        pair = joint_support_pair(evidence, gold)
        if pair is not None:
            eligible += 1
            assert {pair[0].title, pair[1].title} == gold
    assert eligible > 0  # BM25 top-5 holds both gold paragraphs for some items
