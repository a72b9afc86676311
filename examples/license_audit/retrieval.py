"""Per-source retrieval: a short source whole, a long one hierarchically, or flat top-k.

A source is split into sections (a heading paragraph starts one: a numbered clause, an
"Article"/"Section" line or an upper-case title) and chunks (paragraphs, long ones cut into
windows of :data:`CHUNK_WORDS` words). Modes:

* ``whole``: the source has at most :data:`WHOLE_MAX_WORDS` words, so it goes in whole (no
  retrieval misses);
* ``hierarchical``: BM25 (``rank_bm25.BM25Okapi``) ranks the sections, then the chunks of the
  best :data:`TOP_SECTIONS` sections; the section and chunk ranks are fused by reciprocal rank
  fusion and the fused list is reranked by query-term coverage;
* ``flat``: BM25 top-k over every chunk of the source (the comparison mode).

Usage::

    evidence, chosen = retrieve_evidence("May I use this commercially?", source, "auto")
    print(chosen.mode, chosen.sections, chosen.chunks)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import snowballstemmer
from rank_bm25 import BM25Okapi

from groundtrace.analyzer.audit import Source

__all__ = [
    "CHUNK_WORDS",
    "RRF_K",
    "TOP_K",
    "TOP_SECTIONS",
    "WHOLE_MAX_WORDS",
    "Chunk",
    "Retrieval",
    "RetrievalMode",
    "Section",
    "retrieve_evidence",
    "split_source",
]

#: ``auto`` (whole when short, else hierarchical) or ``flat``.
RetrievalMode = Literal["auto", "flat"]
WHOLE_MAX_WORDS: Final = 400
CHUNK_WORDS: Final = 120
TOP_SECTIONS: Final = 3
TOP_K: Final = 4
#: Reciprocal-rank-fusion constant.
RRF_K: Final = 60
_HEADING: Final = re.compile(
    r"^\s*(?:(?:section|article|clause)\s+\d+|\d+(?:\.\d+)*\.?\s+\S|[A-Z][A-Z0-9 ,.'\-]{3,}$)",
    re.IGNORECASE,
)
_UPPER_HEADING: Final = re.compile(r"^[A-Z][A-Z0-9 ,.'\-]{3,}$")
_TOKEN: Final = re.compile(r"[a-z0-9]+")
_STOP: Final = frozenset(
    (
        "a", "an", "the", "i", "me", "my", "may", "must", "do", "does", "this", "that", "it",
        "of", "to", "in", "on", "for", "is", "be", "as", "or", "and", "with", "when", "what",
        "under",
    )
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Chunk:
    """A paragraph (or a window of a long one)."""

    id: str
    section: str
    text: str


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the chunks up to the next heading."""

    id: str
    title: str
    chunks: tuple[Chunk, ...]

    @property
    def text(self) -> str:
        """The section's text."""
        return "\n\n".join(c.text for c in self.chunks)


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What the retriever chose (recorded on the RETRIEVE span)."""

    mode: str
    sections: tuple[str, ...]
    chunks: tuple[str, ...]
    source_words: int


_STEMMER: Final = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def _tokens(text: str) -> list[str]:
    """Lower-cased words without stop words, Snowball-stemmed (``patents`` -> ``patent``)."""
    return [_stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOP]


def _is_heading(paragraph: str) -> bool:
    first = paragraph.strip().splitlines()[0]
    return len(first.split()) <= 12 and bool(
        _HEADING.match(first)
        if len(paragraph.split()) <= 12
        else re.match(r"^\s*\d", first) or _UPPER_HEADING.match(first)
    )


def split_source(source: Source) -> tuple[Section, ...]:
    """The source's sections and chunks (ids ``<source>:s<n>`` and ``<source>:c<n>``)."""
    return _split(source.id, source.text)


@functools.cache
def _split(source_id: str, text: str) -> tuple[Section, ...]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    groups: list[tuple[str, list[str]]] = []
    for paragraph in paragraphs:
        words = paragraph.split()
        if not groups or _is_heading(paragraph):
            groups.append((paragraph.splitlines()[0].strip()[:80], []))
            if len(words) <= 12:  # a bare heading titles its section, it is not a chunk
                continue
        for start in range(0, len(words), CHUNK_WORDS):
            groups[-1][1].append(" ".join(words[start : start + CHUNK_WORDS]))
    sections: list[Section] = []
    n_chunk = 0
    for index, (title, texts) in enumerate(groups):
        section_id = f"{source_id}:s{index}"
        chunks = []
        for piece in texts:
            chunks.append(Chunk(id=f"{source_id}:c{n_chunk}", section=section_id, text=piece))
            n_chunk += 1
        sections.append(Section(id=section_id, title=title, chunks=tuple(chunks)))
    return tuple(sections)


def _bm25_order(query: list[str], texts: Sequence[str]) -> list[int]:
    scores = BM25Okapi([_tokens(t) or ["_"] for t in texts]).get_scores(query)
    return sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))


def _coverage(query: list[str], text: str) -> float:
    words = set(_tokens(text))
    return len(words & set(query)) / len(set(query)) if query else 0.0


def _hierarchical(query: list[str], sections: Sequence[Section]) -> tuple[list[str], list[Chunk]]:
    section_order = _bm25_order(query, [f"{s.title} {s.text}" for s in sections])
    best = [sections[i] for i in section_order[:TOP_SECTIONS]]
    candidates = [(rank, c) for rank, s in enumerate(best, start=1) for c in s.chunks]
    chunk_order = _bm25_order(query, [c.text for _, c in candidates])
    fused: dict[str, tuple[float, Chunk]] = {}
    for chunk_rank, i in enumerate(chunk_order, start=1):
        section_rank, chunk = candidates[i]
        score = 1.0 / (RRF_K + section_rank) + 1.0 / (RRF_K + chunk_rank)
        fused[chunk.id] = (score, chunk)
    reranked = sorted(
        fused.values(), key=lambda sc: (-_coverage(query, sc[1].text), -sc[0], sc[1].id)
    )
    return [s.id for s in best], [c for _, c in reranked[:TOP_K]]


def retrieve_evidence(
    query: str, source: Source, mode: RetrievalMode
) -> tuple[list[dict[str, object]], Retrieval]:
    """Evidence items (id, title, rank, content) from ``source`` and what was chosen."""
    sections = split_source(source)
    words = len(source.text.split())
    tokens = _tokens(query)
    if mode == "auto" and words <= WHOLE_MAX_WORDS:
        item = {"id": f"{source.id}:all", "title": source.title, "rank": 1, "content": source.text}
        return [item], Retrieval("whole", (), (), words)
    if mode == "auto":
        chosen_sections, chunks = _hierarchical(tokens, sections)
        used_mode = "hierarchical"
    else:
        every = [c for s in sections for c in s.chunks]
        chunks = [every[i] for i in _bm25_order(tokens, [c.text for c in every])[:TOP_K]]
        chosen_sections, used_mode = list(dict.fromkeys(c.section for c in chunks)), "flat"
    evidence: list[dict[str, object]] = [
        {"id": c.id, "title": source.title, "rank": rank, "content": c.text}
        for rank, c in enumerate(chunks, start=1)
    ]
    return evidence, Retrieval(
        used_mode, tuple(chosen_sections), tuple(c.id for c in chunks), words
    )
