"""A deterministic lexical extractive reader: question + chunks -> answer, confidence, used ids.

It reads only what a model would see (the question and the evidence chunks), never a gold
answer. The steps:

1. split every chunk into sentences and score each with BM25 against the question (plus a
   bonus when the chunk's title is named in the question);
2. by question form:
   * yes/no questions ("Are both X and Y ...?", "Is X ...?"): "yes" when each of the two
     best-matching chunks covers the question's predicate words, else "no";
   * two-option questions ("Which is older, A or B?"): the option whose chunk carries the
     earliest/latest year for first/older/later/younger questions, else the better-covered one;
   * otherwise: in the best sentences, the best candidate span (a capitalised name, a number or
     a year, a quoted title) that is not already in the question, preferring the span type the
     question word asks for (when/what year -> year; how many -> number; who/where -> name);
3. confidence from the score margin between the best and the runner-up candidate.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Chunk", "ReaderAnswer", "read"]

_STOPWORD_TEXT: Final = (
    "a an the of in on at to for from by with and or but is are was were be been being do "
    "does did has have had what which who whom whose when where why how that this these those "
    "it its as than then there their they he she his her him i you we our your not no yes "
    "both same also into about after before over under between during one first "
)
_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
_TOKEN_RE: Final = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
_SENTENCE_RE: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_YEAR_RE: Final = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUMBER_RE: Final = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
_QUOTED_RE: Final = re.compile(r"\"([^\"]{2,80})\"")
_CAPS_RE: Final = re.compile(
    r"\b[A-Z][\w'\-.&]*(?:\s+(?:of|the|de|von|van|and|da|du|la|le)?\s*[A-Z][\w'\-.&]*)*"
)
_YES_NO_START: Final = re.compile(
    r"^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I
)
_EARLY_WORDS: Final = frozenset(
    {"first", "older", "oldest", "earlier", "earliest", "before", "founded first"}
)
_LATE_WORDS: Final = frozenset({"younger", "youngest", "later", "latest", "newer", "recent"})
_PLACE_Q_RE: Final = re.compile(
    r"\bwhere\b|\b(what|which) (city|country|state|town|county|region|village|island)\b", re.I
)
_PLACE_PREP_RE: Final = re.compile(r"\b(in|at|from|near)\s+$")
_K1: Final = 1.2
_B: Final = 0.75


@dataclass(frozen=True, slots=True)
class Chunk:
    """One evidence chunk as shown to the reader."""

    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class ReaderAnswer:
    """What the reader answers: the span, a confidence in [0, 1] and the chunk ids used."""

    answer: str
    confidence: float
    used_chunks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Sentence:
    chunk: Chunk
    text: str
    score: float


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def _content(text: str) -> list[str]:
    return [t for t in _tokens(text) if t not in _STOPWORDS]


def _score_sentences(question: str, chunks: Sequence[Chunk]) -> list[_Sentence]:
    """BM25 over all sentences of all chunks, plus a bonus for a title named in the question."""
    units = [
        (chunk, sentence.strip())
        for chunk in chunks
        for sentence in _SENTENCE_RE.split(chunk.text)
        if sentence.strip()
    ]
    if not units:
        return []
    docs = [_content(f"{c.title} {s}") for c, s in units]
    n = len(docs)
    avg_len = sum(len(d) for d in docs) / n or 1.0
    df: Counter[str] = Counter(t for d in docs for t in set(d))
    q_terms = set(_content(question))
    q_lower = question.lower()
    scored = []
    for (chunk, sentence), doc in zip(units, docs, strict=True):
        tf = Counter(doc)
        score = 0.0
        for term in q_terms:
            if term in tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                norm = tf[term] + _K1 * (1 - _B + _B * len(doc) / avg_len)
                score += idf * tf[term] * (_K1 + 1) / norm
        title = chunk.title.lower().split(" (")[0]
        if title and title in q_lower:
            score += 2.0
        scored.append(_Sentence(chunk, sentence, score))
    scored.sort(key=lambda s: -s.score)
    return scored


def _candidates(sentence: str, question: str) -> list[tuple[str, str]]:
    """Candidate spans (text, kind) in ``sentence`` not already contained in the question."""
    q_lower = question.lower()
    q_terms = set(_tokens(question))
    found: list[tuple[str, str]] = []
    for match in _QUOTED_RE.finditer(sentence):
        found.append((match.group(1), "name"))
    for match in _YEAR_RE.finditer(sentence):
        found.append((match.group(0), "year"))
    for match in _NUMBER_RE.finditer(sentence):
        if not _YEAR_RE.fullmatch(match.group(0)):
            found.append((match.group(0), "number"))
    for match in _CAPS_RE.finditer(sentence):
        span = match.group(0).strip(" .")
        while " " in span and span.split(None, 1)[0].lower() in _STOPWORDS:
            span = span.split(None, 1)[1]
        if span.lower() in _STOPWORDS:
            continue
        words = [w for w in _tokens(span) if w not in _STOPWORDS]
        # Drop leading words the question already names ("Jaws director Steven" -> "Steven").
        while words and words[0] in q_terms:
            words.pop(0)
            span = span.split(None, 1)[1] if " " in span else ""
        if words and span:
            found.append((span, "name"))
    return [(text, kind) for text, kind in found if text.lower() not in q_lower]


def _candidates_seen(best: dict[str, tuple[float, Chunk]], text: str) -> list[tuple[str, int]]:
    """Earlier candidates that overlap ``text`` (a span seen in several sentences is likelier)."""
    words = set(_tokens(text))
    return [(other, 1) for other in best if other != text and words & set(_tokens(other))]


def _anchor_positions(sentence: str, question: str) -> list[int]:
    """Character offsets of the question's content words in ``sentence``."""
    q_terms = set(_content(question))
    return [m.start() for m in _TOKEN_RE.finditer(sentence) if m.group(0).lower() in q_terms]


def _proximity(start: int, length: int, anchors: list[int]) -> float:
    """Bonus in (0, 0.5] for a span close to a question word (about 6 characters per word)."""
    if start < 0 or not anchors:
        return 0.0
    gap = min(min(abs(a - start), abs(a - (start + length))) for a in anchors)
    return 0.5 / (1.0 + gap / 6.0)


def _wanted_kind(question: str) -> str | None:
    q = question.lower()
    if re.search(r"\b(what|which) (city|country|state|town|county|river|company|team|band)\b", q):
        return "name"
    if "what year" in q or "which year" in q or q.startswith("when") or " when " in q:
        return "year"
    if "how many" in q or "how much" in q or "how old" in q or "how long" in q:
        return "number"
    if q.startswith(("who", "where", "which")) or " who " in q:
        return "name"
    return None


def _confidence(best: float, runner_up: float) -> float:
    if best <= 0:
        return 0.05
    margin = (best - max(runner_up, 0.0)) / best
    return round(min(0.95, max(0.05, 0.25 + 0.7 * margin)), 3)


def _answer_yes_no(question: str, ranked: list[_Sentence]) -> ReaderAnswer:
    best_chunks: list[Chunk] = []
    for sentence in ranked:
        if sentence.chunk not in best_chunks:
            best_chunks.append(sentence.chunk)
        if len(best_chunks) == 2:
            break
    titles = " ".join(c.title for c in best_chunks)
    predicate = set(_content(question)) - set(_content(titles))
    coverage = [
        len(predicate & set(_content(c.text))) / len(predicate) if predicate else 0.0
        for c in best_chunks
    ]
    weakest = min(coverage) if coverage else 0.0
    answer = "yes" if weakest >= 0.5 else "no"
    confidence = round(0.5 + abs(weakest - 0.5) * 0.8, 3)
    return ReaderAnswer(answer, confidence, tuple(c.id for c in best_chunks))


def _options(question: str) -> tuple[str, str] | None:
    match = re.search(r"(?:,|:)?\s*([^,?:]+?)\s+or\s+([^,?]+?)\s*\??\s*$", question)
    if match is None:
        return None
    left = match.group(1)
    # Keep the capitalised tail of the left option ("Who died first Robert Graves").
    caps = _CAPS_RE.findall(left)
    left = caps[-1] if caps and "," not in question else left
    return left.strip(" \"'"), match.group(2).strip(" \"'")


def _answer_options(
    question: str, options: tuple[str, str], chunks: Sequence[Chunk]
) -> ReaderAnswer:
    q_words = set(_tokens(question))
    scored: list[tuple[float, str, Chunk | None, int | None]] = []
    for option in options:
        option_terms = set(_content(option))
        best: tuple[float, Chunk | None] = (0.0, None)
        for chunk in chunks:
            overlap = len(option_terms & set(_content(chunk.title))) * 2 + len(
                option_terms & set(_content(chunk.text[:300]))
            )
            if overlap > best[0]:
                best = (float(overlap), chunk)
        year = None
        if best[1] is not None:
            years = _YEAR_RE.findall(best[1].text)
            year = int(years[0]) if years else None
        scored.append((best[0], option, best[1], year))
    used = tuple(c.id for _, _, c, _ in scored if c is not None)
    (_, opt_a, _, year_a), (_, opt_b, _, year_b) = scored
    early = bool(q_words & _EARLY_WORDS)
    late = bool(q_words & _LATE_WORDS)
    if (early or late) and year_a is not None and year_b is not None and year_a != year_b:
        a_first = year_a < year_b
        # "younger"/"later" born = later year; "older"/"first" = earlier year
        pick = opt_a if a_first == early else opt_b
        return ReaderAnswer(pick, 0.7, used)
    pick = opt_a if scored[0][0] >= scored[1][0] else opt_b
    return ReaderAnswer(pick, 0.35, used)


def read(question: str, chunks: Sequence[Chunk]) -> ReaderAnswer:
    """Answer ``question`` from ``chunks`` by lexical overlap (deterministic).

    Args:
        question: the question text.
        chunks: the evidence shown to the reader, in prompt order.

    Returns:
        The answer span, a confidence derived from the score margin, and the ids of the
        chunks the answer came from (empty with the answer "unknown" when there is no evidence).
    """
    ranked = _score_sentences(question, chunks)
    if not ranked:
        return ReaderAnswer("unknown", 0.05, ())
    options = _options(question)
    if options is not None:
        return _answer_options(question, options, chunks)
    if _YES_NO_START.match(question):
        return _answer_yes_no(question, ranked)
    wanted = _wanted_kind(question)
    place = _PLACE_Q_RE.search(question) is not None
    best: dict[str, tuple[float, Chunk]] = {}
    for position, sentence in enumerate(ranked[:4]):
        anchors = _anchor_positions(sentence.text, question)
        for index, (text, kind) in enumerate(_candidates(sentence.text, question)):
            score = sentence.score * (1.0 - 0.15 * position) - 0.01 * index
            start = sentence.text.find(text)
            score += _proximity(start, len(text), anchors)
            if place and _PLACE_PREP_RE.search(sentence.text[max(0, start - 6) : start]):
                score += 1.0
            if kind == (wanted or "name"):
                score += 1.5
            else:
                score -= 1.0
            score += 0.5 * sum(1 for t, _ in _candidates_seen(best, text))
            previous = best.get(text)
            if previous is None or score > previous[0]:
                best[text] = (score, sentence.chunk)
    if not best:
        top = ranked[0]
        return ReaderAnswer(
            top.text,
            _confidence(top.score, ranked[1].score if len(ranked) > 1 else 0),
            (top.chunk.id,),
        )
    ordered = sorted(best.items(), key=lambda item: -item[1][0])
    (answer, (top_score, chunk)) = ordered[0]
    runner_up = ordered[1][1][0] if len(ordered) > 1 else 0.0
    return ReaderAnswer(answer, _confidence(top_score, runner_up), (chunk.id,))
