"""The licence audit's retrieval: sections and chunks, stemming, the hierarchical pool."""

from __future__ import annotations

from groundtrace.analyzer.audit import Source
from groundtrace.examples.license_audit.corpus import load_corpus
from groundtrace.examples.license_audit.retrieval import (
    POOL_CHUNKS,
    TOP_K,
    retrieve_evidence,
    split_source,
)

_TEXT = """Example Licence

1. Definitions
--------------

1.1. "Work" means the software.

2. You may copy and distribute verbatim copies of the Work in any medium, provided that
you keep intact every notice.

NO WARRANTY

3. THE WORK IS PROVIDED AS IS.

You may not charge a fee.
"""


def test_sections_start_at_numbered_clauses_and_no_text_is_lost() -> None:
    sections = split_source(Source(id="x", group="g", title="X", text=_TEXT))
    titles = [s.title for s in sections]
    assert len(titles) == 3
    assert titles[0] == 'Example Licence / 1. Definitions / 1.1. "Work" means the software.'
    # a clause whose first line is long still starts a section
    assert titles[1].startswith("2. You may copy and distribute verbatim copies")
    assert titles[2] == "NO WARRANTY / 3. THE WORK IS PROVIDED AS IS."
    chunks = [c.text for s in sections for c in s.chunks]
    # short sentences are text, not titles: nothing of the source is dropped
    assert '1.1. "Work" means the software.' in chunks and "You may not charge a fee." in chunks
    assert all(s.chunks for s in sections)  # a bare title never makes an empty section


def test_retrieval_matches_stems_and_the_hierarchical_pool_holds_enough_chunks() -> None:
    corpus = {s.id: s for s in load_corpus().sources}
    gpl = corpus["gpl-3.0"]
    evidence, chosen = retrieve_evidence("Are there patents?", gpl, "auto")
    assert chosen.mode == "hierarchical" and len(evidence) == TOP_K
    assert all("patent" in str(e["content"]).lower() for e in evidence[:3])  # patents -> patent
    pool = [c for s in split_source(gpl) if s.id in chosen.sections for c in s.chunks]
    assert len(pool) >= POOL_CHUNKS and set(chosen.chunks) <= {c.id for c in pool}
    flat, flat_chosen = retrieve_evidence("Are there patents?", gpl, "flat")
    assert flat_chosen.mode == "flat" and len(flat) == TOP_K
