"""Section-aware retrieval finds the answering clause at least as often as flat top-k.

The clause-level gold (``examples/license_audit/data/clause_gold.jsonl``): for each question
and each licence over 400 words whose tags give it a stance, the sentence of the licence that
answer rests on -- the sentence the question's cues find in the whole text, kept only where the
whole-text answer equals the tag-derived gold answer (145 of the 199 such pairs). A retrieval
finds the clause when one of its chunks holds the clause's first ten words.
"""

from __future__ import annotations

import json

import pytest

from groundtrace.examples.license_audit.corpus import DATA_DIR, load_corpus, load_questions
from groundtrace.examples.license_audit.retrieval import WHOLE_MAX_WORDS, retrieve_evidence


def _norm(text: str) -> str:
    return " ".join(text.split())


def _recall(mode: str) -> tuple[int, int]:
    sources = {s.id: s for s in load_corpus().sources}
    questions = {q.id: q for q in load_questions()}
    rows = [json.loads(x) for x in (DATA_DIR / "clause_gold.jsonl").read_text().splitlines()]
    found = 0
    for row in rows:
        question = questions[row["question"]]
        query = " ".join((question.text, *question.topics))
        evidence, _ = retrieve_evidence(query, sources[row["source"]], mode)  # type: ignore[arg-type]
        head = " ".join(_norm(row["clause"]).split()[:10])
        found += any(head in _norm(str(e["content"])) for e in evidence)
    return found, len(rows)


def test_every_gold_clause_is_verbatim_in_its_long_licence() -> None:
    sources = {s.id: s for s in load_corpus().sources}
    rows = [json.loads(x) for x in (DATA_DIR / "clause_gold.jsonl").read_text().splitlines()]
    assert len(rows) == 145
    for row in rows:
        text = sources[row["source"]].text
        assert len(text.split()) > WHOLE_MAX_WORDS
        assert _norm(row["clause"]) in _norm(text), row


@pytest.mark.timeout(120)
def test_hierarchical_finds_the_answering_clause_at_least_as_often_as_flat() -> None:
    hierarchical, n = _recall("auto")
    flat, _ = _recall("flat")
    assert hierarchical >= flat, f"clause recall: hierarchical {hierarchical}/{n}, flat {flat}/{n}"
