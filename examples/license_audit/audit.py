"""Run the licence audit end to end: traces, the run record and its reports in one folder.

Usage::

    import asyncio
    from pathlib import Path
    from groundtrace.examples.license_audit.audit import run_licence_audit

    run = asyncio.run(run_licence_audit(out=Path("runs/audit")))
    print(run.summary.overall.prevalence)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import groundtrace.sdk as gt
from groundtrace.analyzer.audit import (
    Answer,
    AuditRun,
    AuditSettings,
    AuditValidation,
    Corpus,
    PairLabeller,
    Progress,
    Question,
    Source,
    run_audit,
    write_reports,
)
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.executor import Executor, LocalExecutor, UnitJournal
from groundtrace.analyzer.llm import ClientCounts

from .app import APP_NAME, AnswerFn, answer_one, app_version, extractive_answer
from .corpus import QuestionCues, load_corpus, load_questions
from .retrieval import RetrievalMode

__all__ = ["estimate_licence_audit", "run_licence_audit", "subset_corpus"]


def subset_corpus(
    corpus: Corpus, *, questions: Collection[str] = (), max_sources: int | None = None
) -> Corpus:
    """The corpus restricted to ``questions`` (ids; empty: all) and its first sources.

    Raises:
        InputError: an unknown question id, or ``max_sources`` below 2.
    """
    known = {q.id for q in corpus.questions}
    if unknown := sorted(set(questions) - known):
        raise InputError(f"unknown question id(s): {', '.join(unknown)}", field="--questions")
    if max_sources is not None and max_sources < 2:
        raise InputError("an audit needs at least two sources", field="--sources")
    kept_questions = tuple(q for q in corpus.questions if not questions or q.id in questions)
    kept_sources = corpus.sources[:max_sources] if max_sources else corpus.sources
    ids = {s.id for s in kept_sources}
    gold = tuple(
        g for g in corpus.gold
        if g.source_id in ids and g.question_id in {q.id for q in kept_questions}
    )  # fmt: skip
    groups = {s.group for s in kept_sources}
    kept_questions = tuple(q for q in kept_questions if q.scope == "general" or q.scope in groups)
    return Corpus(name=corpus.name, sources=kept_sources, questions=kept_questions, gold=gold)


@dataclass(slots=True)
class _Answering:
    """One answer of the instrumented app, traced into ``traces`` by whichever process runs it.

    It pickles (the answerer included), so a cluster worker can run it: the first answer in a
    process that has not configured the SDK for this run configures it there (one
    ``traces-<pid>.jsonl`` file per process in the same folder).
    """

    traces: Path
    retrieval: RetrievalMode
    answerer: AnswerFn
    cues: Mapping[str, QuestionCues]
    traced_in: int = field(default=0)

    def trace_here(self) -> None:
        if self.traced_in != os.getpid():
            gt.configure(
                service_name=APP_NAME, app_version=app_version(self.retrieval), exporter="file",
                file_path=self.traces, capture_content=True,
            )  # fmt: skip
            self.traced_in = os.getpid()

    async def __call__(self, question: Question, source: Source) -> Answer:
        self.trace_here()
        cues = self.cues[question.id]
        return await answer_one(question, source, cues, self.answerer, self.retrieval)

    async def aclose(self) -> None:
        """Flush this process's traces (a cluster worker calls it before it stops)."""
        if self.traced_in == os.getpid():
            gt.shutdown()
            self.traced_in = 0


def _settings(
    retrieval: RetrievalMode, answerer: str, labeller: PairLabeller | None, concurrency: int
) -> AuditSettings:
    return AuditSettings(
        retrieval=retrieval,
        answerer=answerer,
        labeller=labeller.name if labeller is not None else "baseline",
        concurrency=concurrency,
    )


async def estimate_licence_audit(
    *,
    retrieval: RetrievalMode = "auto",
    answerer: AnswerFn = extractive_answer,
    answerer_name: str = "extractive",
    labeller: PairLabeller | None = None,
    concurrency: int = 8,
    questions: Collection[str] = (),
    max_sources: int | None = None,
) -> AuditRun:
    """The audit of :func:`run_licence_audit` in memory only: nothing traced, journaled or
    written. With the answerer and the labeller on a
    :class:`~groundtrace.analyzer.llm.RequestRecorder` (``audit run --estimate``) it records
    every request the run would make, answered from the call cache where it can be.
    """
    corpus = subset_corpus(load_corpus(), questions=questions, max_sources=max_sources)
    cues = {q.id: q.cues for q in load_questions()}

    async def one(question: Question, source: Source) -> Answer:
        return await answer_one(question, source, cues[question.id], answerer, retrieval)

    settings = _settings(retrieval, answerer_name, labeller, concurrency)
    return await run_audit(corpus, one, settings, labeller=labeller,
                           executor=LocalExecutor(concurrency))  # fmt: skip


async def run_licence_audit(
    *,
    out: Path,
    retrieval: RetrievalMode = "auto",
    answerer: AnswerFn = extractive_answer,
    answerer_name: str = "extractive",
    labeller: PairLabeller | None = None,
    judge_validation: AuditValidation | None = None,
    concurrency: int = 8,
    questions: Collection[str] = (),
    max_sources: int | None = None,
    progress: Progress | None = None,
    model_calls: Callable[[], dict[str, ClientCounts]] | None = None,
    executor: Executor | None = None,
) -> AuditRun:
    """Answer, label and report the licence audit into ``out`` (traces under ``out/traces``).

    Every answer and label is journaled in ``out/units.sqlite`` as it arrives: a re-run into
    the same folder (after a kill, say) starts none of them again.

    Args:
        out: the run folder (``run.json``, ``report.md``, ``report.html``, ``traces/``).
        retrieval: ``auto`` (whole / hierarchical) or ``flat``.
        answerer: the ANSWER step's answerer.
        answerer_name: recorded in the run settings.
        labeller: pair labeller for the open pairs (default: the baseline).
        judge_validation: the validation record that lets a judge's labels count.
        concurrency: requests (and judge calls) in flight.
        questions: question ids to keep (empty: every question).
        max_sources: keep the first sources only (a subset run).
        progress: progress callback.
        model_calls: the model client's counters, recorded in the run.
        executor: what runs answers and pair labels (default: local, ``concurrency``).
    """
    corpus = subset_corpus(load_corpus(), questions=questions, max_sources=max_sources)
    traces = out / "traces"
    try:
        traces.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the run folder: {exc.strerror}", path=str(out)) from None
    one = _Answering(traces, retrieval, answerer, {q.id: q.cues for q in load_questions()})
    one.trace_here()
    journal = UnitJournal(out / "units.sqlite")
    settings = _settings(retrieval, answerer_name, labeller, concurrency)
    try:
        run = await run_audit(
            corpus, one, settings, labeller=labeller, judge_validation=judge_validation,
            progress=progress, model_calls=model_calls, executor=executor, journal=journal,
        )  # fmt: skip
    finally:
        journal.close()
        await one.aclose()
    write_reports(out, run)
    return run
