"""A deterministic lexical baseline judge that needs no model.

Scores are token-overlap statistics over content tokens (NFKC, case-folded, accents stripped,
stop words removed, a plural ``s`` dropped):

* ``adherence``: the answer is split into claim sentences; each claim's support is the share
  of its content tokens found in the context; the score is the mean claim support weighted by
  claim length, multiplied by the weakest claim's support (one unsupported claim pulls the
  score down, as a human grader would);
* ``context_relevance``: share of the question's content tokens found in the context;
* ``answer_relevance``: share of the question's content tokens found in the answer, or 1 when
  the answer is short (<= 5 content tokens) and fully supported by the context -- a bare
  entity answer to a question rarely repeats the question.

A metric with nothing to measure (e.g. an answer without content tokens) is a ``missing``
protocol error, never a made-up score.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from ._fingerprint import fingerprint
from ._types import JudgeCase, Judgment, Metric, ProtocolError, ProtocolErrorKind

__all__ = ["LEXICAL_VERSION", "LexicalJudge", "content_tokens"]

#: Version of the algorithm (part of the fingerprint).
LEXICAL_VERSION = "lexical_overlap_v1"

_STOP_WORDS = (
    "a an the and or but if then than so of in on at to for from by with without about as "
    "into onto over under is are was were be been being am do does did doing have has had "
    "having it its this that these those there here which who whom whose what when where why "
    "how not no nor i me my we our you your he him his she her they them their also can could "
    "would should may might must will shall just only very more most such any all each both "
    "other some same one s t d ll re ve "
)
_STOP = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SHORT_ANSWER = 5


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def content_tokens(text: str) -> list[str]:
    """Normalised content tokens of ``text`` (order kept, duplicates kept)."""
    out: list[str] = []
    for token in _WORD.findall(_fold(text)):
        if token in _STOP or (len(token) < 2 and not token.isdigit()):
            continue
        out.append(token[:-1] if len(token) > 3 and token.endswith("s") else token)
    return out


def _share(tokens: list[str], vocabulary: set[str]) -> float | None:
    if not tokens:
        return None
    return sum(t in vocabulary for t in tokens) / len(tokens)


class LexicalJudge:
    """Token-overlap scores for the RAG triad; deterministic and free."""

    name = "lexical"

    def fingerprint(self, threshold: float) -> Mapping[str, Any]:
        """Fingerprint of this algorithm version at ``threshold``."""
        return fingerprint(
            endpoint="builtin:lexical",
            model=LEXICAL_VERSION,
            rubric_version=LEXICAL_VERSION,
            rubric_digest=LEXICAL_VERSION,
            schema_digest="triad_scores_v1",
            threshold=threshold,
            temperature=None,
            seed=None,
        )

    async def judge(self, case: JudgeCase) -> Judgment:
        """Score ``case`` (async only to satisfy the :class:`Judge` protocol)."""
        return self.judge_sync(case)

    def judge_sync(self, case: JudgeCase) -> Judgment:
        """Score ``case``."""
        context = set(content_tokens(case.context_text))
        query = content_tokens(case.query)
        answer = content_tokens(case.answer)
        claims = [c for c in (content_tokens(s) for s in _SENTENCE.split(case.answer)) if c]
        values: dict[Metric, float | None] = {
            Metric.CONTEXT_RELEVANCE: _share(query, context),
            Metric.ADHERENCE: _adherence(claims, context),
            Metric.ANSWER_RELEVANCE: None,
        }
        adherence = values[Metric.ADHERENCE]
        if answer and len(answer) <= _SHORT_ANSWER and adherence == 1.0:
            values[Metric.ANSWER_RELEVANCE] = 1.0
        else:
            values[Metric.ANSWER_RELEVANCE] = _share(query, set(answer))
        scores = {m: v for m, v in values.items() if v is not None}
        errors = tuple(
            ProtocolError(m, ProtocolErrorKind.MISSING, "no content tokens to compare")
            for m, v in values.items()
            if v is None
        )
        return Judgment(case.case_id, scores, rationale=None, errors=errors)


def _adherence(claims: list[list[str]], context: set[str]) -> float | None:
    supports = [(_share(c, context) or 0.0, len(c)) for c in claims]
    if not supports:
        return None
    total = sum(n for _, n in supports)
    weighted = sum(s * n for s, n in supports) / total
    return weighted * min(s for s, _ in supports)
