"""Run the licence audit end to end: traces, the run record and its reports in one folder.

Usage::

    import asyncio
    from pathlib import Path
    from groundtrace.examples.license_audit.audit import run_licence_audit

    run = asyncio.run(run_licence_audit(out=Path("runs/audit")))
    print(run.summary.overall.prevalence)
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from groundtrace.analyzer.audit import (
    AnswerFn,
    AuditRun,
    AuditSettings,
    AuditValidation,
    Corpus,
    PairLabeller,
    Progress,
    TracedAnswering,
    extractive_answer,
    run_audit,
    run_audit_folder,
)
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.executor import Executor, LocalExecutor
from groundtrace.analyzer.llm import ClientCounts

from .app import APP_NAME, SPAN_NAME, app_version, retriever
from .corpus import load_corpus, load_questions
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


def _answering(traces: Path, retrieval: RetrievalMode, answerer: AnswerFn) -> TracedAnswering:
    """The audit's traced app with this example's retrieval, names and cues (it pickles)."""
    return TracedAnswering(
        traces, answerer, {q.id: q.cues for q in load_questions()}, retriever(retrieval),
        app_name=APP_NAME, app_version=app_version(retrieval), span_name=SPAN_NAME,
    )  # fmt: skip


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
    one = _answering(Path("."), retrieval, answerer)  # never configured: nothing is traced
    settings = _settings(retrieval, answerer_name, labeller, concurrency)
    return await run_audit(corpus, one.untraced, settings, labeller=labeller,
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
    one = _answering(out / "traces", retrieval, answerer)
    return await run_audit_folder(
        out, corpus, one, _settings(retrieval, answerer_name, labeller, concurrency),
        traces=one.traces, before=one.trace_here, labeller=labeller,
        judge_validation=judge_validation, progress=progress, model_calls=model_calls,
        executor=executor, closers=(one.aclose,),
    )  # fmt: skip
