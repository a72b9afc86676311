"""The audit in the one analysis shape: ``plan`` -> ``run`` -> ``write_report`` -> ``reading``.

:func:`run` (async, given the run context by the one driver) answers the plan's units on the
run's executor into the config's run folder (the driver locks it and opens its unit journal
``units.sqlite``, so a re-run resumes; model calls are cached in ``llm_cache.sqlite``; the
traced app writes one trace per answer into ``traces/``), labels every pair and returns the
:class:`AuditResult`. The driver writes the reports (:func:`write_report`) and exits 6 with
:func:`nothing_measured`'s reason. :func:`estimate` goes the same way without sending or
writing anything: the driver awaits it for ``--estimate``.

Usage::

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.audit import ANALYSIS, Config

    config = Config(out="runs/a", sources="guides/", questions="questions.jsonl")
    done = run_analysis(ANALYSIS, config, out=config.out)
    print(done.reading)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from groundtrace.analyzer._analysis import Analysis
from groundtrace.analyzer._results import read
from groundtrace.analyzer._settings import Calls
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.llm import (
    CallCache,
    ChatRequest,
    FailureKind,
    ModelClient,
    RequestRecorder,
)

from ._answerers import AnswerFn, EndpointAnswerer, extractive_answer
from ._app import AUDIT_APP_NAME, AUDIT_APP_VERSION, TracedAnswering, whole_source
from ._config import Config
from ._demo import demo_config
from ._folder import FolderRun, GivenAnswers, audit_in_folder, nothing_measured
from ._judge import PairJudge
from ._plan import AnswerUnit, AuditPlan, plan
from ._reading import reading
from ._records import AuditResult, AuditSettings
from ._report import write_report
from ._run import AnswerOne, PairLabeller, run_audit
from ._validate import AuditValidation

if TYPE_CHECKING:
    from groundtrace.analyzer import RunContext
    from groundtrace.analyzer.executor import UnitJournal

__all__ = ["ANALYSIS", "API_KEY_ENV", "estimate", "run"]

#: Environment variable read for the endpoints' API key (optional).
API_KEY_ENV: Final = "GROUNDTRACE_AUDIT_API_KEY"


@dataclass(frozen=True, slots=True)
class _Setup:
    """A run's answering and labelling, made from its plan and config."""

    answer_one: AnswerOne
    traced: TracedAnswering | None
    labeller: PairLabeller | None
    settings: AuditSettings


def _planned(units: Sequence[AnswerUnit], config: Config) -> AuditPlan:
    return units if isinstance(units, AuditPlan) else plan(config).restricted(units)


def _setup(
    planned: AuditPlan, config: Config, connect: Callable[[str], ModelClient], traces: Path
) -> _Setup:
    """The run's ``answer_one`` (traced into ``traces`` unless given), labeller and settings."""
    answer_url, judge_url = config.answerer_url(), config.judge_url()
    traced: TracedAnswering | None = None
    if planned.given is not None:
        one: AnswerOne = GivenAnswers(planned.given)
        name = planned.answerer
    else:
        answer_fn: AnswerFn = extractive_answer
        name = "extractive"
        if answer_url is not None and config.model:
            made = EndpointAnswerer(connect(answer_url), config.model)
            answer_fn, name = made, made.name
        retriever = planned.retriever or whole_source
        one = traced = TracedAnswering(
            traces, answer_fn, planned.inputs.cues, retriever,
            app_name=getattr(retriever, "app_name", AUDIT_APP_NAME),
            app_version=getattr(retriever, "app_version", AUDIT_APP_VERSION),
            span_name=getattr(retriever, "span_name", "audit_answer"),
        )  # fmt: skip
    labeller = None
    if judge_url is not None and config.judge_model:
        labeller = PairJudge(connect(judge_url), config.judge_model)
    retrieval = "given"
    if traced is not None:
        retrieval = str(getattr(traced.retriever, "mode", None) or config.retriever or "whole")
    settings = AuditSettings(
        retrieval=retrieval, answerer=name,
        labeller=labeller.name if labeller is not None else "baseline",
        concurrency=config.in_flight(),
    )  # fmt: skip
    return _Setup(one, traced, labeller, settings)


def _validation(config: Config) -> AuditValidation | None:
    return None if config.validation is None else read(config.validation, AuditValidation)


async def run(units: Sequence[AnswerUnit], config: Config, context: RunContext) -> AuditResult:
    """Answer ``units`` on the run's executor into the run folder, label every pair.

    Every answer and label is journaled in the driver's journal (``<out>/units.sqlite``) as it
    arrives: a re-run into the same folder starts none of them again. The config's call
    ceilings are the run's budget (the driver's). No report is written.

    Args:
        units: the plan (:func:`plan`), or some of its units.
        config: the run's config.
        context: the run's executor, journal, budget and progress (``answers``, ``pairs``).

    Raises:
        InputError: a unit not of the config's plan, or an unreadable validation record.
        RunStoppedError: a signal or a call ceiling stopped the run (what finished is kept).
    """
    planned = _planned(units, config)
    return await _run(planned, config, context, config.calls(), _validation(config))


async def _run(
    planned: AuditPlan,
    config: Config,
    context: RunContext,
    calls: Calls,
    validation: AuditValidation | None,
) -> AuditResult:
    out = context.out
    clients: dict[str, ModelClient] = {}

    def connect(url: str) -> ModelClient:
        if url not in clients:
            clients[url] = ModelClient(
                url, api_key=os.environ.get(API_KEY_ENV), cache=CallCache(out / "llm_cache.sqlite"),
                concurrency=calls.concurrency(url), timeout=config.timeout,
                rate_limit=calls.rate_limit(url),
            )  # fmt: skip
        return clients[url]

    try:
        made = _setup(planned, config, connect, out / "traces")
        traced = made.traced
        options = FolderRun(
            traces=None if traced is None else traced.traces,
            before=None if traced is None else traced.trace_here,
            labeller=made.labeller, judge_validation=validation, progress=context.progress,
            model_calls=(lambda: {u: c.stats.snapshot() for u, c in clients.items()})
            if clients else None,
            executor=context.executor, closers=() if traced is None else (traced.aclose,),
            asked=[(u.question, u.source) for u in planned],
        )  # fmt: skip
        return await audit_in_folder(
            out, planned.inputs.corpus, made.answer_one, made.settings, options, report=False,
            journal=context.journal,
        )  # fmt: skip
    finally:
        for client in clients.values():
            await client.aclose()


async def estimate(
    units: Sequence[AnswerUnit], config: Config, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int, int]:
    """The model requests the run of ``units`` would send (``--estimate``; the driver awaits
    it): nothing is sent, traced or written.

    Each request is answered from the run folder's call cache where it can be, else fails as
    not sent; the answers are made untraced, in this process, with no journal.

    Args:
        units: the plan (:func:`plan`), or some of its units.
        config: the run's config.
        journal: the run folder's journal (not read: the cache answers what ran).

    Returns:
        The requests; 0 (units the journal holds are not told apart); with a pair judge,
        the label calls, at most, of pairs whose answers are not made yet.
    """
    del journal
    path = Path(config.out) / "llm_cache.sqlite"
    cache = CallCache(path) if path.exists() else None
    try:
        found, requests = await _estimated(units, config, cache)
        return requests, 0, _dependent(found) if config.judge_url() is not None else 0
    finally:
        if cache is not None:
            cache.close()


async def _estimated(
    units: Sequence[AnswerUnit], config: Config, cache: CallCache | None
) -> tuple[AuditResult, list[ChatRequest]]:
    planned = _planned(units, config)
    recorders: dict[str, RequestRecorder] = {}

    def connect(url: str) -> ModelClient:
        return recorders.setdefault(url, RequestRecorder(url, cache))

    made = _setup(planned, config, connect, Path("."))  # never configured: nothing is traced
    answer_one = made.traced.untraced if made.traced is not None else made.answer_one
    executor = LocalExecutor(config.in_flight())
    try:
        found = await run_audit(
            planned.inputs.corpus, answer_one, made.settings, labeller=made.labeller,
            executor=executor, asked=[(u.question, u.source) for u in planned],
        )  # fmt: skip
    finally:
        executor.close()
    return found, [r for c in recorders.values() for r in c.seen]


def _dependent(run: AuditResult) -> int:
    """Pair label calls, at most, that wait on answers not made yet (each may need one)."""
    dependent = 0
    for question in run.questions:
        mine = [a for a in run.answers if a.question_id == question.id]
        later = sum(1 for a in mine if (a.error or "").startswith(FailureKind.NOT_SENT))
        dependent += _pairs(len(mine)) - _pairs(len(mine) - later)
    return dependent


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _run_folder(config: Config) -> str:
    return config.out


#: The audit in the one analysis shape (``groundtrace analyze audit --config FILE``).
ANALYSIS: Final[Analysis[Config, AnswerUnit, AuditResult]] = Analysis(
    name="audit",
    title="Multi-source audit: same question, different sources, different answers",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    demo=demo_config,
    journal="units.sqlite",
    run_folder=_run_folder,
    estimate=estimate,
)
