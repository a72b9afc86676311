"""An audit run into a run folder: journal, traces, the run record and its reports.

:func:`run_audit_folder` holds the folder's lock (taken when the unit journal opens) from the
first answer until the reports are written. Each answer made by the traced app is one trace
in ``<run>/traces/``; a run killed between a trace's write and its answer's journaling leaves a
trace that the resumed run makes again, so a run first drops the traces no journaled answer
names (the interventions' trace pruning): one trace per answer.

Answers made elsewhere come in as :class:`GivenAnswers` -- from an answers file
(:func:`~groundtrace.analyzer.audit.load_answers`) or from captured traces
(:func:`answers_from_traces`: the source id on the REQUEST span, the question from the case
id or the query).

A run in which no answer says anything (every answer ``absent`` or a protocol error) measured
nothing: it raises :class:`~groundtrace.analyzer.errors.NothingMeasuredError` after its files
are written.

Usage::

    run = await run_audit_folder(Path("runs/a"), inputs.corpus, one, AuditSettings())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundtrace.analyzer._deprecation import deprecated
from groundtrace.analyzer.errors import InputError, NothingMeasuredError
from groundtrace.analyzer.executor import Executor, UnitJournal
from groundtrace.analyzer.llm import ClientCounts
from groundtrace.analyzer.replay import keep_traces
from groundtrace.collectors import ReadReport, Trace, read_traces

from ._inputs import answer_stance
from ._model import Answer, Corpus, Question, Source, in_scope
from ._pairs import normalise
from ._records import AuditResult, AuditSettings
from ._report import write_report
from ._run import AnswerOne, PairLabeller, Progress, answer_key, run_audit
from ._validate import AuditValidation

__all__ = ["GivenAnswers", "answers_from_traces", "nothing_measured", "run_audit_folder"]


@dataclass(frozen=True, slots=True)
class GivenAnswers:
    """An ``answer_one`` that hands out answers made elsewhere (absent where none was given)."""

    answers: tuple[Answer, ...]

    async def __call__(self, question: Question, source: Source) -> Answer:
        """The given answer of ``source`` to ``question``."""
        for answer in self.answers:
            if answer.question_id == question.id and answer.source_id == source.id:
                return answer
        return Answer(question_id=question.id, source_id=source.id, stance="absent")


def _question_of(
    trace: Trace, questions: dict[str, Question], by_text: dict[str, str]
) -> str | None:
    request = trace.request
    case = request.case_id or ""
    for candidate in (case, case.rsplit("/", 1)[0] if "/" in case else None):
        if candidate and candidate in questions:
            return candidate
    return by_text.get(normalise(request.query or "")) if request.query else None


def answers_from_traces(
    paths: Sequence[str], corpus: Corpus, report: ReadReport
) -> tuple[list[Answer], int]:
    """The per-source answers the traces of ``paths`` hold, and how many traces were not used.

    A trace answers question Q from source S when its REQUEST span carries the source id S
    (``groundtrace.source.id``, set by ``@request(source_id=...)`` or a ``source_id``
    argument) and its case id is Q or ``Q/<anything>``, or its query is Q's text (compared
    normalised). The answer text is the trace's answer; its stance is read as for an answers
    file. The latest trace of a pair wins. Traces that name no known (question, in-scope
    source) are counted, not used.

    Raises:
        InputError: no trace answers any question of the corpus.
    """
    questions = {q.id: q for q in corpus.questions}
    by_text = {normalise(q.text): q.id for q in corpus.questions}
    scoped = {q.id: {s.id for s in in_scope(q, corpus.sources)} for q in corpus.questions}
    latest: dict[tuple[str, str], tuple[int, Trace]] = {}
    unused = 0
    for trace in read_traces(list(paths), report=report):
        question_id = _question_of(trace, questions, by_text)
        source_id = trace.request.source_id
        if question_id is None or source_id is None or source_id not in scoped[question_id]:
            unused += 1
            continue
        started = min((s.start_ns for s in trace.steps), default=0)
        key = (question_id, source_id)
        if key not in latest or started >= latest[key][0]:
            if key in latest:
                unused += 1
            latest[key] = (started, trace)
        else:
            unused += 1
    if not latest:
        raise InputError(
            f"no trace answers a question of the corpus ({unused} trace(s) read): a trace needs "
            "the source id on its REQUEST span and the question id as its case id (or the "
            "question's text as its query)", path=", ".join(paths), field="source_id",
        )  # fmt: skip
    out: list[Answer] = []
    for (question_id, source_id), (_, trace) in latest.items():
        text = trace.answer or ""
        stance = answer_stance(text)
        claim = normalise(text)
        if stance in ("yes", "no") and claim.split(" ", 1)[0] == stance:
            claim = claim.partition(" ")[2]
        out.append(Answer(
            question_id=question_id, source_id=source_id, stance=stance or "conditional",
            points=(claim,) if claim and stance != "absent" else (), text=text,
            quote=trace.quotes[0] if trace.quotes else "", trace_id=trace.request.trace_id,
        ))  # fmt: skip
    return out, unused


def nothing_measured(run: AuditResult) -> str | None:
    """Why ``run`` measured nothing (every answer absent or a protocol error), else None."""
    answers = run.answers
    if any(a.stance != "absent" and a.error is None for a in answers):
        return None
    errors = sum(1 for a in answers if a.error is not None)
    return (
        f"no source answered any question: {len(answers)} answer(s), {errors} protocol "
        f"error(s), {len(answers) - errors} absent (answerer {run.settings.answerer})"
    )


def _journaled_traces(journal: UnitJournal, corpus: Corpus, settings: AuditSettings) -> set[str]:
    keep: set[str] = set()
    for question in corpus.questions:
        for source in in_scope(question, corpus.sources):
            found = journal.get(answer_key(settings, question, source), Answer)
            if found is not None and found.trace_id:
                keep.add(found.trace_id.lower())
    return keep


@deprecated(since="0.2.0", remove_in="0.3.0", use="groundtrace.analyzer.run_analysis_async")
async def run_audit_folder(
    out: Path,
    corpus: Corpus,
    answer_one: AnswerOne,
    settings: AuditSettings,
    *,
    traces: Path | None = None,
    before: Callable[[], None] | None = None,
    labeller: PairLabeller | None = None,
    judge_validation: AuditValidation | None = None,
    progress: Progress | None = None,
    model_calls: Callable[[], dict[str, ClientCounts]] | None = None,
    executor: Executor | None = None,
    closers: Iterable[Callable[[], object]] = (),
) -> AuditResult:
    """Answer, label and report ``corpus`` into ``out`` (``run.json``, ``report.md``/``.html``).

    Every answer and label is journaled in ``out/units.sqlite`` as it arrives: a re-run into
    the same folder (after a kill, say) starts none of them again. The folder's lock is held
    until the reports are written.

    Args:
        out: the run folder.
        corpus: sources, questions, gold.
        answer_one: answers one question from one source (e.g. a :class:`TracedAnswering`
            writing into ``traces``, or :class:`GivenAnswers`).
        settings: recorded in the run.
        traces: the folder ``answer_one`` writes its traces into (pruned to the journaled
            answers' traces before the run starts), if any.
        before: called once the folder is locked and pruned, before the first answer (e.g.
            to configure the trace exporter of this process).
        labeller: pair labeller for the open pairs (default: the baseline).
        judge_validation: the validation record that lets a judge's labels count.
        progress: progress callback.
        model_calls: the model client's counters, recorded in the run.
        executor: what runs answers and pair labels.
        closers: awaited-or-called after the run, before the reports (flush traces).

    Raises:
        NothingMeasuredError: no answer says anything (the files are written first).
    """
    options = FolderRun(
        traces=traces, before=before, labeller=labeller, judge_validation=judge_validation,
        progress=progress, model_calls=model_calls, executor=executor, closers=tuple(closers),
    )  # fmt: skip
    run = await audit_in_folder(out, corpus, answer_one, settings, options, report=True)
    if (reason := nothing_measured(run)) is not None:
        raise NothingMeasuredError(f"{reason}; the run's files are in {out}")
    return run


@dataclass(frozen=True, slots=True)
class FolderRun:
    """How :func:`audit_in_folder` runs (see :func:`run_audit_folder` for each field).

    Attributes:
        traces: the traces folder of the traced app, pruned first.
        before: called once the folder is locked and pruned.
        labeller: the pair labeller (default: the baseline).
        judge_validation: the record that lets a judge's labels count.
        progress: progress callback.
        model_calls: the model clients' counters, recorded in the run.
        executor: what runs answers and pair labels.
        closers: awaited-or-called after the run (flush traces, close clients).
        asked: the (question, source) answers to make (default: all in scope).
    """

    traces: Path | None = None
    before: Callable[[], None] | None = None
    labeller: PairLabeller | None = None
    judge_validation: AuditValidation | None = None
    progress: Progress | None = None
    model_calls: Callable[[], dict[str, ClientCounts]] | None = None
    executor: Executor | None = None
    closers: tuple[Callable[[], object], ...] = ()
    asked: Sequence[tuple[Question, Source]] | None = None


async def audit_in_folder(
    out: Path,
    corpus: Corpus,
    answer_one: AnswerOne,
    settings: AuditSettings,
    options: FolderRun,
    *,
    report: bool,
    journal: UnitJournal | None = None,
) -> AuditResult:
    """The run of ``corpus`` journaled in ``out`` (its lock held throughout), reports if asked.

    ``journal`` is the folder's journal when the caller (the driver) opened it and holds the
    folder's lock; else it is opened (and the lock taken) here.

    Raises:
        InputError: the run folder cannot be created.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
        if options.traces is not None:
            options.traces.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the run folder: {exc.strerror}", path=str(out)) from None
    opened = journal is None
    if journal is None:
        journal = UnitJournal(out / "units.sqlite")
    try:
        if options.traces is not None:
            keep_traces(options.traces, _journaled_traces(journal, corpus, settings))
        if options.before is not None:
            options.before()
        try:
            run = await run_audit(
                corpus, answer_one, settings, labeller=options.labeller,
                judge_validation=options.judge_validation, progress=options.progress,
                model_calls=options.model_calls, executor=options.executor, journal=journal,
                asked=options.asked,
            )  # fmt: skip
        finally:
            for close in options.closers:
                result = close()
                if hasattr(result, "__await__"):
                    await result
        if report:
            write_report(run, out)
    finally:
        if opened:
            journal.close()
    return run
