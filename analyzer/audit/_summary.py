"""The audit's figures: absence, disagreement prevalence, significance and the heat map.

Disagreement prevalence is the share of non-absent pairs labelled ``divergent`` or
``contradictory``; it is None (never 0) where a slice has no non-absent pair. Every figure
lists the ids of the pairs behind it (``question:source_a~source_b``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import msgspec

from ._model import LABELS, Answer, PairLabel, Source

__all__ = [
    "DISAGREEMENT_LABELS",
    "AbsenceFigure",
    "AuditSummary",
    "HeatCell",
    "PrevalenceFigure",
    "pair_id",
    "summarise",
]

#: The labels that count as disagreement.
DISAGREEMENT_LABELS: Final = frozenset({"divergent", "contradictory"})


class AbsenceFigure(msgspec.Struct, frozen=True, kw_only=True):
    """How often one source (or question) does not address what it is asked."""

    key: str
    n_answers: int
    n_absent: int
    rate: float
    absent: tuple[str, ...]


class PrevalenceFigure(msgspec.Struct, frozen=True, kw_only=True):
    """Disagreement prevalence of one slice (a question, topic, group pair or source).

    Attributes:
        key: the slice.
        n_pairs: pairs in the slice.
        n_present: pairs whose two answers both address the question.
        n_disagree: present pairs labelled divergent or contradictory.
        prevalence: ``n_disagree / n_present``; None when ``n_present`` is 0.
        disagreeing: ids of the disagreeing pairs.
    """

    key: str
    n_pairs: int
    n_present: int
    n_disagree: int
    prevalence: float | None
    disagreeing: tuple[str, ...]


class HeatCell(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One cell of the source x source heat map (over all questions)."""

    source_a: str
    source_b: str
    n_present: int
    n_disagree: int


class AuditSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Every figure of an audit run."""

    n_answers: int
    n_pairs: int
    n_prefiltered: int
    prefilter_share: float | None
    decided_by: dict[str, int]
    labels: dict[str, int]
    significance: dict[str, int]
    absence_by_source: tuple[AbsenceFigure, ...]
    absence_by_question: tuple[AbsenceFigure, ...]
    by_question: tuple[PrevalenceFigure, ...]
    by_topic: tuple[PrevalenceFigure, ...]
    by_group: tuple[PrevalenceFigure, ...]
    by_source: tuple[PrevalenceFigure, ...]
    heatmap: tuple[HeatCell, ...]
    overall: PrevalenceFigure


def pair_id(pair: PairLabel) -> str:
    """``question:source_a~source_b``."""
    return f"{pair.question_id}:{pair.source_a}~{pair.source_b}"


def _prevalence(key: str, pairs: Sequence[PairLabel]) -> PrevalenceFigure:
    present = [p for p in pairs if p.label != "absent"]
    disagree = [pair_id(p) for p in present if p.label in DISAGREEMENT_LABELS]
    return PrevalenceFigure(
        key=key,
        n_pairs=len(pairs),
        n_present=len(present),
        n_disagree=len(disagree),
        prevalence=len(disagree) / len(present) if present else None,
        disagreeing=tuple(disagree),
    )


def _sliced(
    pairs: Iterable[PairLabel], keys: Callable[[PairLabel], Iterable[str]]
) -> tuple[PrevalenceFigure, ...]:
    slices: dict[str, list[PairLabel]] = {}
    for pair in pairs:
        for key in keys(pair):
            slices.setdefault(key, []).append(pair)
    return tuple(_prevalence(k, v) for k, v in sorted(slices.items()))


def _absence(key: str, answers: Sequence[Answer]) -> AbsenceFigure:
    absent = tuple(f"{a.question_id}:{a.source_id}" for a in answers if a.stance == "absent")
    return AbsenceFigure(
        key=key, n_answers=len(answers), n_absent=len(absent),
        rate=len(absent) / len(answers), absent=absent,
    )  # fmt: skip


def _absences(answers: Sequence[Answer], key: Callable[[Answer], str]) -> tuple[AbsenceFigure, ...]:
    groups: dict[str, list[Answer]] = {}
    for answer in answers:
        groups.setdefault(key(answer), []).append(answer)
    return tuple(_absence(k, v) for k, v in sorted(groups.items()))


def summarise(
    answers: Sequence[Answer],
    pairs: Sequence[PairLabel],
    sources: Sequence[Source],
    topics: dict[str, str],
) -> AuditSummary:
    """Every figure of one run.

    Args:
        answers: the answers, one per (question, in-scope source).
        pairs: the pair labels.
        sources: the sources (their groups slice the pairs).
        topics: question id -> topic.
    """
    group = {s.id: s.group for s in sources}
    decided = Counter(p.decided_by for p in pairs)
    n_prefiltered = sum(n for k, n in decided.items() if k.startswith("prefilter:"))
    cells: dict[tuple[str, str], list[int]] = {}
    for pair in pairs:
        cell = cells.setdefault((pair.source_a, pair.source_b), [0, 0])
        if pair.label != "absent":
            cell[0] += 1
            cell[1] += pair.label in DISAGREEMENT_LABELS
    labels = Counter(p.label for p in pairs)
    return AuditSummary(
        n_answers=len(answers),
        n_pairs=len(pairs),
        n_prefiltered=n_prefiltered,
        prefilter_share=n_prefiltered / len(pairs) if pairs else None,
        decided_by=dict(sorted(decided.items())),
        labels={label: labels.get(label, 0) for label in LABELS},
        significance=dict(sorted(Counter(p.significance for p in pairs if p.significance).items())),
        absence_by_source=_absences(answers, lambda a: a.source_id),
        absence_by_question=_absences(answers, lambda a: a.question_id),
        by_question=_sliced(pairs, lambda p: (p.question_id,)),
        by_topic=_sliced(pairs, lambda p: (topics[p.question_id],)),
        by_group=_sliced(
            pairs, lambda p: (" x ".join(sorted((group[p.source_a], group[p.source_b]))),)
        ),
        by_source=_sliced(pairs, lambda p: (p.source_a, p.source_b)),
        heatmap=tuple(
            HeatCell(source_a=a, source_b=b, n_present=c[0], n_disagree=c[1])
            for (a, b), c in sorted(cells.items())
        ),
        overall=_prevalence("all", pairs),
    )
