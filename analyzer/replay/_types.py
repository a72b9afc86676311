"""Units of replay work and their results (what the journal stores)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

__all__ = ["ReplayChunk", "ReplayUnit", "UnitResult", "UnitStatus", "restrict_ids"]


@dataclass(frozen=True, slots=True)
class ReplayChunk:
    """One evidence item of the analyzer: what the interventions plan on and the replay shows.

    The one record of an evidence item inside the analyzer: the evidence set R of a trace,
    the targets, the replacement pool, joint ablation and the replayed evidence list all use
    it (a replacement candidate is shown as it is).

    Attributes:
        id: chunk id (what the prompt shows in square brackets).
        title: document title (matched against the gold supporting titles S).
        content: chunk text.
        rank: retrieval rank (1 = best) when known; where R is put in rank order a chunk
            without one ranks by its 0-based position in R.
        score: retrieval score when known.
    """

    id: str
    title: str
    content: str = ""
    rank: int | None = None
    score: float | None = None

    def as_item(self) -> dict[str, Any]:
        """The evidence item as the SDK conventions read it (id, title, content, rank, score)."""
        item: dict[str, Any] = {"id": self.id, "title": self.title, "content": self.content}
        if self.rank is not None:
            item["rank"] = self.rank
        if self.score is not None:
            item["score"] = self.score
        return item


@dataclass(frozen=True, slots=True)
class ReplayUnit:
    """One counterfactual replay: a trace, an operator, a target, a replacement, a seed.

    Attributes:
        trace_id: the original trace.
        case_id: the case id of the original request, if any.
        query: the captured query.
        operator: ``REMOVE``, ``REPLACE``, ``DUPLICATE``, ``ZERO``, ``JOINT_REMOVE``, the
            random-target controls ``REMOVE@random`` etc., or ``ORIGINAL`` (recomputation).
        target_id: the target e_i (``+``-joined ids for a joint removal), if any.
        replacement_id: the replacement chunk of ``REPLACE``, if any.
        seed: the seed sent to the model and used for random draws of this unit.
        evidence: the perturbed evidence list, in prompt order.
    """

    trace_id: str
    case_id: str | None
    query: str
    operator: str
    target_id: str | None
    replacement_id: str | None
    seed: int
    evidence: tuple[ReplayChunk, ...] = ()

    @property
    def key(self) -> str:
        """Journal key: sha256 of (trace, operator, target, replacement, seed, evidence ids)."""
        ident = [
            self.trace_id,
            self.operator,
            self.target_id,
            self.replacement_id,
            self.seed,
            [c.id for c in self.evidence],
        ]
        payload = json.dumps(ident, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def describe(self) -> dict[str, Any]:
        """JSON-ready identity of the unit (no evidence contents)."""
        return {
            "key": self.key,
            "trace_id": self.trace_id,
            "case_id": self.case_id,
            "operator": self.operator,
            "target_id": self.target_id,
            "replacement_id": self.replacement_id,
            "seed": self.seed,
            "evidence_ids": [c.id for c in self.evidence],
        }


class UnitStatus:
    """Status values of a :class:`UnitResult`."""

    OK: Final = "ok"
    FAILED: Final = "failed"


class UnitResult(msgspec.Struct, frozen=True):
    """What one replay produced (or why it failed); the record the unit journal keeps.

    Attributes:
        key: the unit's journal key.
        status: ``ok`` or ``failed``.
        answer: the counterfactual answer ỹ (``None`` when failed).
        confidence: c̃; ``None`` when the reply gave none (never a made-up number).
        cited_ids: ids the counterfactual answer says it used (restricted to ids shown).
        parse_error: what was wrong with the reply, when it parsed with problems.
        counterfactual_trace_id: the trace id of τ̃ recorded in the run folder.
        model_calls: model calls made for this unit (0 when served from the cache).
        cached: whether the model reply came from the cache (endpoint replay only).
        error_kind: failure category when failed (``http_error``, ``exception``...).
        error_message: failure message when failed.
        extra: what else the replay kept (the raw reply, a recording error...).
    """

    key: str
    status: str
    answer: str | None = None
    confidence: float | None = None
    cited_ids: tuple[str, ...] = ()
    parse_error: str | None = None
    counterfactual_trace_id: str | None = None
    model_calls: int = 0
    cached: bool | None = None
    error_kind: str | None = None
    error_message: str | None = None
    extra: dict[str, Any] = {}

    @property
    def ok(self) -> bool:
        """Whether the replay produced an answer."""
        return self.status == UnitStatus.OK

    @classmethod
    def failure(cls, key: str, kind: str, message: str, calls: int = 0) -> UnitResult:
        """A failed unit (recorded, excluded from statistics, counted in the report)."""
        return cls(
            key, UnitStatus.FAILED, error_kind=kind, error_message=message, model_calls=calls
        )


def restrict_ids(ids: Sequence[str], shown: Sequence[ReplayChunk]) -> tuple[str, ...]:
    """Keep the ids that were shown, first occurrence order."""
    known = {c.id for c in shown}
    return tuple(i for i in dict.fromkeys(ids) if i in known)
