"""One audit run: answer every (question, in-scope source), label every pair, summarise.

Answers and pair labels are units of an executor (local with bounded concurrency, or a Ray
cluster), journaled by the driver as they arrive; the pre-filters decide the
certain pairs without a labeller call. A labeller that is not the baseline (a pair judge)
counts only when a validation record bound to its fingerprint says it is validated; otherwise
its labels are kept for review and the baseline's labels are counted.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Protocol

import msgspec

from groundtrace.analyzer.executor import (
    Executor,
    LocalExecutor,
    Spread,
    UnitJournal,
    run_journaled,
)
from groundtrace.analyzer.llm import ClientCounts

from ._model import Answer, Corpus, PairLabel, Question, Source, in_scope
from ._pairs import answer_pairs, baseline_label, gold_pair_labels, prefilter
from ._records import AuditResult, AuditSettings, PairError, SourceInfo
from ._summary import summarise
from ._validate import AuditAcceptance, AuditValidation, validate_labels

__all__ = [
    "BASELINE_FINGERPRINT",
    "AnswerOne",
    "BaselineLabeller",
    "PairLabeller",
    "Progress",
    "answer_key",
    "judge_counts",
    "run_audit",
]

#: Answers one question from one source alone.
AnswerOne = Callable[[Question, Source], Awaitable[Answer]]
#: Progress callback: (phase, done, total).
Progress = Callable[[str, int, int], None]
#: Fingerprint of the baseline labeller (its rules are versioned with the code).
BASELINE_FINGERPRINT: Final = hashlib.sha256(b"groundtrace-audit-baseline-v1").hexdigest()


class PairLabeller(Protocol):
    """Labels a pair of answers the pre-filters left open."""

    @property
    def name(self) -> str:
        """Recorded in the run settings and the validation."""

    @property
    def fingerprint(self) -> str:
        """Digest of every setting that changes its labels."""

    async def label(self, question: Question, a: Answer, b: Answer) -> PairLabel | PairError:
        """The pair's label, or a visible protocol error."""


class BaselineLabeller:
    """The offline deterministic labeller (:func:`baseline_label`)."""

    name: Final = "baseline"
    fingerprint: Final = BASELINE_FINGERPRINT

    async def label(self, question: Question, a: Answer, b: Answer) -> PairLabel | PairError:
        """The baseline label of the pair."""
        return baseline_label(a, b, question.topics[0])


def judge_counts(
    labeller: PairLabeller, validation: AuditValidation | None
) -> tuple[bool, str | None]:
    """Whether ``labeller``'s labels count, and why not."""
    if labeller.fingerprint == BASELINE_FINGERPRINT:
        return True, None
    if validation is None:
        return False, "no validation record for this judge"
    if validation.fingerprint != labeller.fingerprint:
        return False, "the validation record belongs to another judge fingerprint"
    if not validation.validated:
        return False, "the judge failed validation: " + "; ".join(validation.reasons)
    return True, None


def _key(*parts: object) -> str:
    return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()


def answer_key(settings: AuditSettings, question: Question, source: Source) -> str:
    """Content key of one answer: the answerer, the retrieval, the question and the source."""
    return _key("answer", settings.answerer, settings.retrieval, question, source)


def _pair_key(labeller: PairLabeller, question: Question, a: Answer, b: Answer) -> str:
    """Content key of one pair label: the labeller's fingerprint, the question, both answers."""
    return _key("pair", labeller.fingerprint, question, a, b)


def _phase(progress: Progress | None, phase: str) -> Callable[[int, int], None] | None:
    return None if progress is None else (lambda done, total: progress(phase, done, total))


async def run_audit(
    corpus: Corpus,
    answer_one: AnswerOne,
    settings: AuditSettings,
    *,
    labeller: PairLabeller | None = None,
    judge_validation: AuditValidation | None = None,
    acceptance: AuditAcceptance | None = None,
    progress: Progress | None = None,
    model_calls: Callable[[], dict[str, ClientCounts]] | None = None,
    executor: Executor | None = None,
    journal: UnitJournal | None = None,
    asked: Sequence[tuple[Question, Source]] | None = None,
) -> AuditResult:
    """Run the audit of ``corpus``.

    Answers and open pairs are units of ``executor`` (default: local, ``settings.concurrency``
    in flight). With a ``journal`` every answer and label is kept as it arrives (failed
    answers and pair errors are not, so a re-run retries them) and a re-run into the same
    journal starts none of the kept ones again.

    Args:
        corpus: sources, questions and (optionally) gold answers.
        answer_one: the instrumented app's entry point.
        settings: recorded in the run; ``concurrency`` bounds requests in flight.
        labeller: the pair labeller for open pairs (default: the baseline).
        judge_validation: the validation record that lets a judge's labels count.
        acceptance: criteria of the in-run validation against gold.
        progress: called as work completes.
        model_calls: returns the model client's counters at the end (recorded).
        executor: what runs the units (``answer_one`` and the labeller must pickle for Ray).
        journal: the run folder's unit journal.
        asked: the (question, source) answers to make (default: every question of
            ``corpus`` from each of its in-scope sources).
    """
    started = time.perf_counter()
    chosen: PairLabeller = labeller or BaselineLabeller()
    counts, _ = judge_counts(chosen, judge_validation)
    questions = {q.id: q for q in corpus.questions}
    sources = {s.id: s for s in corpus.sources}
    runner = executor or LocalExecutor(settings.concurrency)
    if asked is None:
        asked = [(q, s) for q in corpus.questions for s in in_scope(q, corpus.sources)]
    answers = await run_journaled(
        runner, Spread(answer_one), asked, [answer_key(settings, q, s) for q, s in asked],
        journal=journal, kind=Answer, keep=lambda a: a.error is None,
        on_done=_phase(progress, "answers"),
    )  # fmt: skip
    prefiltered: list[PairLabel] = []
    errors: list[PairError] = []
    open_pairs: list[tuple[Question, Answer, Answer]] = []
    for question in corpus.questions:
        mine = [a for a in answers if a.question_id == question.id]
        for a, b in answer_pairs(mine):
            if a.error or b.error:
                errors.append(_answer_error(a, b))
            elif (decided := prefilter(a, b, question.topics[0])) is not None:
                prefiltered.append(decided)
            else:
                open_pairs.append((question, a, b))

    labelled: list[PairLabel | PairError] = await run_journaled(
        runner, Spread(chosen.label), open_pairs, [_pair_key(chosen, *p) for p in open_pairs],
        journal=journal, kind=PairLabel,
        keep=lambda x: isinstance(x, PairLabel), on_done=_phase(progress, "pairs"),
    )  # fmt: skip
    judged = [x for x in labelled if isinstance(x, PairLabel)]
    labeller_errors = [x for x in labelled if isinstance(x, PairError)]
    errors.extend(labeller_errors)
    review: list[PairLabel] = []
    if not counts:
        review = [msgspec.structs.replace(p, review_only=True) for p in judged]
        judged = [baseline_label(a, b, q.topics[0]) for q, a, b in open_pairs]
    pairs = sorted(prefiltered + judged, key=lambda p: p.key)
    topics = {q.id: q.topics[0] for q in corpus.questions}
    validation = None
    if corpus.gold:
        gold = gold_pair_labels(corpus.gold, topics)
        graded = pairs if counts else sorted(prefiltered + review, key=lambda p: p.key)
        validation = validate_labels(
            gold, graded, labeller=chosen.name, fingerprint=chosen.fingerprint,
            # only the labeller's own failures count against it, not unreadable answers
            protocol_errors=len(labeller_errors), acceptance=acceptance,
        )  # fmt: skip
    return AuditResult(
        corpus=corpus.name,
        settings=settings,
        questions=tuple(questions.values()),
        sources=tuple(
            SourceInfo(id=s.id, group=s.group, title=s.title, metadata=s.metadata)
            for s in sources.values()
        ),
        answers=tuple(answers),
        pairs=tuple(pairs),
        pair_errors=tuple(errors),
        review=tuple(review),
        summary=summarise(answers, pairs, corpus.sources, topics, seed=settings.seed),
        validation=validation,
        wall_seconds=round(time.perf_counter() - started, 3),
        model_calls=model_calls() if model_calls else None,
    )


def _answer_error(a: Answer, b: Answer) -> PairError:
    broken = a if a.error else b
    return PairError(
        question_id=a.question_id,
        source_a=a.source_id,
        source_b=b.source_id,
        kind="answer_protocol_error",
        message=f"the answer from {broken.source_id} could not be read: {broken.error}",
    )
