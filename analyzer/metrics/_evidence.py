"""Evidence-level metrics: grounding, calibration error, Jaccard distance (SPEC 4.2.1)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from groundtrace.analyzer._evidence_match import GoldSupport
from groundtrace.analyzer.errors import InputError

__all__ = ["calibration_error", "grounding", "jaccard_distance"]


def grounding(
    used_ids: Collection[str], titles: Mapping[str, str], support_titles: Collection[str]
) -> float:
    """Grounding U_grnd = |{u in U : u matches S}| / |U|, and 0 when U is empty.

    A used chunk matches S when its id or its title matches a gold entry (the one
    evidence-matching rule, :mod:`groundtrace.analyzer._evidence_match`): S may hold ids,
    titles or both.

    Args:
        used_ids: U, the ids of the evidence chunks the model used (duplicates count once).
        titles: chunk id -> title; must cover every used id.
        support_titles: S, the gold supporting titles or ids.

    Raises:
        InputError: a used id has no known title (grounding would be silently wrong).
    """
    used = set(used_ids)
    if not used:
        return 0.0
    missing = sorted(u for u in used if u not in titles)
    if missing:
        raise InputError(f"no title for used evidence ids {missing}", field="titles")
    gold = GoldSupport(support_titles)
    return sum(1 for u in used if gold.matches(u, titles[u])) / len(used)


def calibration_error(confidence: float | None, correct: bool | None) -> float | None:
    """Calibration error |c - 1[correct]|, or ``None`` when c or correctness is missing.

    A missing value is recorded as missing by the caller, never as 0.

    Raises:
        InputError: ``confidence`` lies outside [0, 1].
    """
    if confidence is None or correct is None:
        return None
    if not 0.0 <= confidence <= 1.0:
        raise InputError(f"confidence {confidence} outside [0, 1]", field="confidence")
    return abs(confidence - (1.0 if correct else 0.0))


def jaccard_distance(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard distance 1 - |A & B| / |A | B|, and 0 for two empty sets."""
    left, right = set(a), set(b)
    union = left | right
    if not union:
        return 0.0
    return 1.0 - len(left & right) / len(union)
