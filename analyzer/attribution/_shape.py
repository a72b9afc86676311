"""The attribution analysis in the one analysis shape: ``plan`` → ``run`` → ``write_report``.

:func:`plan` reads the traces and makes one unit per trace whose answer call's prompt holds
its evidence (:func:`~._traces.trace_context`); the others are named with the reason.
:func:`run` scores each unit's ablations with the configured tier (an in-process GGUF model or
an endpoint returning prompt log-probabilities) and method, journaled per trace, so a re-run
resumes; scores go through a content-addressed cache in the run folder. ``ANALYSIS`` ties it
together for :func:`~groundtrace.analyzer.run_analysis`; :func:`demo_config` is its demo hook.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from groundtrace.analyzer._analysis import Analysis, DemoInputs, Plan
from groundtrace.analyzer._results import Result
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.collectors import ReadReport, Trace, read_traces

from ._cache import ScoreCache
from ._config import Config
from ._context import AblationContext
from ._estimate import estimate
from ._methods import (
    MAX_SHAPLEY_SOURCES,
    Attribution,
    context_cite,
    exact_shapley,
    hierarchical,
    leave_one_out,
)
from ._report import nothing_measured, reading, write_report
from ._scorer import AnswerScorer, ContextScorer, Tier
from ._traces import trace_context

if TYPE_CHECKING:
    from groundtrace.analyzer._driver import RunContext
    from groundtrace.analyzer.writeback import Linked

__all__ = ["ANALYSIS", "AttributionResult", "Config", "SourceScore", "TraceAttribution"]


#: The run folder's unit journal and score cache.
JOURNAL = "attribution_journal.sqlite"
CACHE = "attribution_scores.sqlite"


class SourceScore(msgspec.Struct, frozen=True):
    """One source's score: its id, its score (nats; in the behavioural tier ``1[answer
    changed] + D``), the start of its text and, in the behavioural tier, the answer replayed
    without it."""

    id: str
    score: float
    text: str
    answer_without: str | None = None


class TraceAttribution(msgspec.Struct, frozen=True, kw_only=True):
    """The attribution of one trace's answer.

    Attributes:
        trace_id: the trace.
        case_id: its case, if any.
        answer: the answer scored.
        tier: ``in-process``, ``endpoint`` or ``behavioural``.
        method: the method.
        passes: distinct ablations the method asked for.
        full: log-probability of the answer with every source (``None`` in the
            behavioural tier).
        context_gap: full minus the empty-context log-probability (``None`` in the
            behavioural tier).
        sources: per source, in prompt order.
        recorded_answer: the behavioural tier: the recorded answer when the full-evidence
            replay (``answer``, what the removals are compared with) differs from it.
        replays: the behavioural tier: the counterfactual trace ids of its replays (full
            evidence first, then without each source).
        error: why a replay failed (the row is not kept; a re-run replays it again).
        endpoint_form: the endpoint tier: the form its server answered in (``vllm-chat``,
            ``vllm``, ``prompt-logprobs`` or ``tgi``; probed with ``endpoint_form = "auto"``);
            None in the other tiers, and when every score of the row came from the score cache.
    """

    trace_id: str
    case_id: str | None
    answer: str
    tier: str
    method: str
    passes: int
    full: float | None
    context_gap: float | None
    sources: tuple[SourceScore, ...]
    recorded_answer: str | None = None
    replays: tuple[str, ...] = ()
    error: str | None = None
    endpoint_form: str | None = None


class AttributionResult(Result, frozen=True, kw_only=True):
    """The analysis's result: one row per attributed trace and the traces left out."""

    rows: tuple[TraceAttribution, ...] = ()
    not_usable: dict[str, str] = msgspec.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Unit:
    """One trace to attribute."""

    trace_id: str
    case_id: str | None
    context: AblationContext
    trace: Trace | None = None


@dataclass(frozen=True)
class Units(Plan[Unit]):
    """The plan: the units, and the traces left out with the reason."""

    units: tuple[Unit, ...]
    not_usable: dict[str, str] = field(default_factory=dict)


def plan(config: Config) -> Units:
    """One unit per trace whose prompt holds its evidence; the others named with why.

    Raises:
        InputError: ``model_path`` is not a file; what reading the traces raises.
    """
    if config.model_path is not None and not Path(config.model_path).is_file():
        raise InputError("no such model file", path=config.model_path, field="model_path")
    units: list[Unit] = []
    left: dict[str, str] = {}
    for trace in read_traces(list(config.traces), report=ReadReport()):
        try:
            context = trace_context(trace)
        except InputError as exc:
            left[trace.trace_id] = str(exc)
            continue
        if config.method == "shapley" and context.k > MAX_SHAPLEY_SOURCES:
            left[trace.trace_id] = (f"{context.k} evidence items: exact Shapley values take "
                                    f"at most {MAX_SHAPLEY_SOURCES}")  # fmt: skip
            continue
        units.append(Unit(trace.trace_id, trace.request.case_id, context, trace))
        if config.limit is not None and len(units) >= config.limit:
            break
    return Units(tuple(units), left)


def _scorer(config: Config, loop: asyncio.AbstractEventLoop) -> AnswerScorer:
    if config.endpoint is not None:
        from ._endpoint import EndpointScorer

        return EndpointScorer(config.endpoint, config.endpoint_model, form=config.endpoint_form,
                              rate_limit=config.rate_limit, timeout=config.timeout,
                              loop=loop)  # fmt: skip
    from ._llama import LlamaScorer

    path = config.model_path
    if path is None:  # the default embedded model, assembled as the demo's server finds it
        from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS

        return LlamaScorer(MODELS[DEFAULT_MODEL].path(), model=DEFAULT_MODEL,
                           n_ctx=config.n_ctx, n_threads=config.threads)  # fmt: skip
    return LlamaScorer(path, n_ctx=config.n_ctx, n_threads=config.threads)


class _Counting:
    """A scorer whose passes count as model calls in the run's ledger and budget."""

    def __init__(self, scorer: AnswerScorer, context: RunContext) -> None:
        self.scorer = scorer
        self._ledgers = [context.ledger] + ([] if context.budget is None
                                            else [context.budget.ledger])  # fmt: skip

    @property
    def tier(self) -> Tier:
        """The scorer's tier."""
        return self.scorer.tier

    @property
    def model(self) -> str:
        """The scorer's model."""
        return self.scorer.model

    @property
    def form(self) -> str | None:
        """The endpoint's form once a request has settled it (None: another tier, or
        nothing asked yet)."""
        form = getattr(self.scorer, "form", None)
        return None if form in (None, "auto") else str(form)

    def score_many(
        self, prompts: Sequence[Sequence[Mapping[str, Any]]], answer: str, prefix: str = ""
    ) -> list[list[float]]:
        """The scorer's log-probabilities; each prompt counted as one call."""
        from groundtrace.analyzer.llm import Usage

        out = self.scorer.score_many(prompts, answer, prefix)
        for ledger in self._ledgers:
            ledger.add(self.model, Usage(calls=len(prompts)))
        return out

    def close(self) -> None:
        """Close the scorer (a model unloaded, a client closed)."""
        close = getattr(self.scorer, "close", None)
        if close is not None:
            close()


def _attribute(config: Config, score: ContextScorer) -> Attribution:
    context = score.context
    if config.method == "leave-one-out":
        return leave_one_out(score, context.k)
    if config.method == "shapley":
        return exact_shapley(score, context.k)
    if config.method == "hierarchical":
        split, groups = context.split()
        return hierarchical(
            ContextScorer(score.scorer, split, score.cache), groups,
            max_passes=config.max_passes, seed=config.seed,
        )  # fmt: skip
    score([(True,) * context.k])  # the full prompt: how many tokens the answer has
    return context_cite(
        score, context.k, n_tokens=score.answer_tokens, n_ablations=config.n_ablations,
        seed=config.seed,
    )  # fmt: skip


async def run(units: Sequence[Unit], config: Config, context: RunContext) -> AttributionResult:
    """Score every unit (journaled per trace; a re-run resumes). Each model pass made (not
    answered by the score cache) counts as one call in the run's ledger and its budget, so
    ``--max-calls`` counts passes; the model is loaded when a first unit needs it. With
    ``replay``, the behavioural tier replays the app instead (:mod:`._behavioural`)."""
    if config.replay is not None:
        from ._behavioural import run_behavioural

        return await run_behavioural(units, config, context)
    from groundtrace.analyzer.executor import RayExecutor

    if isinstance(context.executor, RayExecutor):  # the model lives in this process
        raise ConfigError(
            "the attribution scores in this process (one model, one evaluation at a time): "
            "run it with --executor local",
            field="--executor",
        )
    made: list[_Counting] = []
    loop = asyncio.get_running_loop()  # the endpoint's rate limiter waits on it
    cache = ScoreCache(context.out / CACHE)
    lock = threading.Lock()  # one model, one evaluation at a time

    def attribute(unit: Unit) -> TraceAttribution:
        with lock:
            if not made:
                made.append(_Counting(_scorer(config, loop), context))
            scorer = made[0]
            score = ContextScorer(scorer, unit.context, cache)
            found = _attribute(config, score)
            (empty,) = score([(False,) * unit.context.k])
        ctx = unit.context
        if config.method == "hierarchical":
            ctx = ctx.split()[0]
        sources = tuple(
            SourceScore(ctx.sources[i].id, round(found.scores[i], 6), ctx.text(i)[:160])
            for i in range(ctx.k)
        )
        return TraceAttribution(
            trace_id=unit.trace_id, case_id=unit.case_id, answer=ctx.answer, tier=scorer.tier,
            method=found.method, passes=found.passes, full=found.full,
            context_gap=found.full - empty, sources=sources, endpoint_form=scorer.form,
        )  # fmt: skip

    async def work(unit: Unit) -> TraceAttribution:
        return await asyncio.to_thread(attribute, unit)

    try:
        rows = await context.map(
            work, units, keys=[u.trace_id for u in units], kind=TraceAttribution,
            phase="attributions",
        )  # fmt: skip
    finally:
        cache.close()
        for scorer in made:
            scorer.close()
    left = units.not_usable if isinstance(units, Units) else {}
    return AttributionResult(rows=tuple(rows), not_usable=dict(left))


def verdicts(result: AttributionResult, config: Config) -> Linked:
    """Each attributed evidence item's score, linked to the retrieval span that returned it
    (the traces read again from ``config.traces``)."""
    from ._verdicts import attribution_verdicts

    return attribution_verdicts(result, read_traces(list(config.traces), report=ReadReport()))


#: Traces the demo attributes: each costs k + 1 replays of the app (k its evidence items).
DEMO_TRACES = 4


def demo_config(inputs: DemoInputs) -> Config:
    """The behavioural tier on the demo app's first :data:`DEMO_TRACES` traces: the app
    replayed through its recorded entry point (its model still serves) with every evidence
    item, then without each one; no log-probabilities, no second model in this process."""
    return Config(traces=(str(inputs.traces),), replay="recorded", limit=DEMO_TRACES)


#: The attribution analysis, for :func:`~groundtrace.analyzer.run_analysis`.
ANALYSIS: Analysis[Config, Unit, AttributionResult] = Analysis(
    name="attribution",
    title="Which evidence caused each answer: the answer's log-probability under ablations "
    "of its recorded prompt",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    journal=JOURNAL,
    unit_key=lambda unit: unit.trace_id,
    estimate=estimate,
    verdicts=verdicts,
    demo=demo_config,
)
