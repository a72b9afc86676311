"""The audit's figures: absence, disagreement prevalence, significance and the heat map.

Disagreement prevalence is the share of non-absent pairs labelled ``divergent`` or
``contradictory``; it is None (never 0) where a slice has no non-absent pair. Every figure
lists the ids of the pairs behind it (``question:source_a~source_b``) and carries a 95%
cluster-bootstrap interval that resamples the slice's questions (see :mod:`._clusters` for
why questions, not pairs); a slice of one question has no interval (None).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import msgspec

from ._clusters import ratio_ci
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
    """How often one source (or question, or the whole run) does not address what it is asked.

    Attributes:
        key: the slice.
        n_answers: answers in the slice.
        n_absent: answers that do not address the question.
        rate: ``n_absent / n_answers``.
        absent: ids (``question:source``) of the absent answers.
        n_questions: questions in the slice (the clusters the interval resamples).
        ci_low: lower bound of the 95% cluster-bootstrap interval (None: one question).
        ci_high: upper bound of that interval.
    """

    key: str
    n_answers: int
    n_absent: int
    rate: float
    absent: tuple[str, ...]
    n_questions: int = 1
    ci_low: float | None = None
    ci_high: float | None = None


class PrevalenceFigure(msgspec.Struct, frozen=True, kw_only=True):
    """Disagreement prevalence of one slice (a question, topic, group pair or source).

    Attributes:
        key: the slice.
        n_pairs: pairs in the slice.
        n_present: pairs whose two answers both address the question.
        n_disagree: present pairs labelled divergent or contradictory.
        prevalence: ``n_disagree / n_present``; None when ``n_present`` is 0.
        disagreeing: ids of the disagreeing pairs.
        n_questions: questions in the slice (the clusters the interval resamples).
        ci_low: lower bound of the 95% cluster-bootstrap interval of the prevalence (None:
            fewer than two questions with a present pair).
        ci_high: upper bound of that interval.
    """

    key: str
    n_pairs: int
    n_present: int
    n_disagree: int
    prevalence: float | None
    disagreeing: tuple[str, ...]
    n_questions: int = 1
    ci_low: float | None = None
    ci_high: float | None = None


class HeatCell(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One cell of the source x source heat map (over all questions)."""

    source_a: str
    source_b: str
    n_present: int
    n_disagree: int


class AuditSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Every figure of an audit run (intervals: ``n_resamples`` cluster resamples, ``seed``)."""

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
    absence: AbsenceFigure | None = None
    n_resamples: int = 0
    seed: int | None = None


def pair_id(pair: PairLabel) -> str:
    """``question:source_a~source_b``."""
    return f"{pair.question_id}:{pair.source_a}~{pair.source_b}"


class _Intervals:
    """The seeded cluster-bootstrap settings every figure of one run shares."""

    def __init__(self, n_resamples: int, seed: int) -> None:
        self.n_resamples, self.seed = n_resamples, seed

    def ratio(
        self, items: Sequence[tuple[str, bool, bool]]
    ) -> tuple[int, float | None, float | None]:
        """(questions, interval) of the share of counted items that hit; each item is
        ``(question_id, counted, hit)``."""
        per: dict[str, list[int]] = {}
        for question, counted, hit in items:
            cell = per.setdefault(question, [0, 0])
            cell[0] += hit and counted
            cell[1] += counted
        low, high = ratio_ci(
            [v[0] for v in per.values()], [v[1] for v in per.values()],
            self.n_resamples, self.seed,
        )  # fmt: skip
        return len(per), low, high


def _prevalence(key: str, pairs: Sequence[PairLabel], ci: _Intervals) -> PrevalenceFigure:
    present = [p for p in pairs if p.label != "absent"]
    disagree = [pair_id(p) for p in present if p.label in DISAGREEMENT_LABELS]
    n_questions, low, high = ci.ratio(
        [(p.question_id, p.label != "absent", p.label in DISAGREEMENT_LABELS) for p in pairs]
    )
    return PrevalenceFigure(
        key=key,
        n_pairs=len(pairs),
        n_present=len(present),
        n_disagree=len(disagree),
        prevalence=len(disagree) / len(present) if present else None,
        disagreeing=tuple(disagree),
        n_questions=n_questions,
        ci_low=low,
        ci_high=high,
    )


def _sliced(
    pairs: Iterable[PairLabel], keys: Callable[[PairLabel], Iterable[str]], ci: _Intervals
) -> tuple[PrevalenceFigure, ...]:
    slices: dict[str, list[PairLabel]] = {}
    for pair in pairs:
        for key in keys(pair):
            slices.setdefault(key, []).append(pair)
    return tuple(_prevalence(k, v, ci) for k, v in sorted(slices.items()))


def _absence(key: str, answers: Sequence[Answer], ci: _Intervals) -> AbsenceFigure:
    absent = tuple(f"{a.question_id}:{a.source_id}" for a in answers if a.stance == "absent")
    n_questions, low, high = ci.ratio(
        [(a.question_id, True, a.stance == "absent") for a in answers]
    )
    return AbsenceFigure(
        key=key, n_answers=len(answers), n_absent=len(absent),
        rate=len(absent) / len(answers), absent=absent,
        n_questions=n_questions, ci_low=low, ci_high=high,
    )  # fmt: skip


def _absences(
    answers: Sequence[Answer], key: Callable[[Answer], str], ci: _Intervals
) -> tuple[AbsenceFigure, ...]:
    groups: dict[str, list[Answer]] = {}
    for answer in answers:
        groups.setdefault(key(answer), []).append(answer)
    return tuple(_absence(k, v, ci) for k, v in sorted(groups.items()))


def summarise(
    answers: Sequence[Answer],
    pairs: Sequence[PairLabel],
    sources: Sequence[Source],
    topics: dict[str, str],
    *,
    n_resamples: int = 2000,
    seed: int = 20260709,
) -> AuditSummary:
    """Every figure of one run.

    Args:
        answers: the answers, one per (question, in-scope source).
        pairs: the pair labels.
        sources: the sources (their groups slice the pairs).
        topics: question id -> topic.
        n_resamples: cluster-bootstrap resamples of every interval.
        seed: their seed (recorded).
    """
    ci = _Intervals(n_resamples, seed)
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
        absence_by_source=_absences(answers, lambda a: a.source_id, ci),
        absence_by_question=_absences(answers, lambda a: a.question_id, ci),
        by_question=_sliced(pairs, lambda p: (p.question_id,), ci),
        by_topic=_sliced(pairs, lambda p: (topics[p.question_id],), ci),
        by_group=_sliced(
            pairs, lambda p: (" x ".join(sorted((group[p.source_a], group[p.source_b]))),), ci
        ),
        by_source=_sliced(pairs, lambda p: (p.source_a, p.source_b), ci),
        heatmap=tuple(
            HeatCell(source_a=a, source_b=b, n_present=c[0], n_disagree=c[1])
            for (a, b), c in sorted(cells.items())
        ),
        overall=_prevalence("all", pairs, ci),
        absence=_absence("all", answers, ci) if answers else None,
        n_resamples=n_resamples,
        seed=seed,
    )
