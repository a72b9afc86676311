"""The attribution analysis in the one analysis shape: ``plan`` → ``run`` → ``write_report``.

:func:`plan` reads the traces and makes one unit per trace whose answer call's prompt holds
its evidence (:func:`~._traces.trace_context`); the others are named with the reason.
:func:`run` scores each unit's ablations with the configured tier (an in-process GGUF model or
an endpoint returning prompt log-probabilities) and method, journaled per trace, so a re-run
resumes; scores go through a content-addressed cache in the run folder. ``ANALYSIS`` ties it
together for :func:`~groundtrace.analyzer.run_analysis`; it is not a built-in yet.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from groundtrace.analyzer._analysis import Analysis, Plan
from groundtrace.analyzer._results import Result, write
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.collectors import ReadReport, read_traces

from ._cache import ScoreCache
from ._context import AblationContext
from ._methods import Attribution, context_cite, exact_shapley, hierarchical, leave_one_out
from ._scorer import AnswerScorer, ContextScorer
from ._traces import trace_context

if TYPE_CHECKING:
    from groundtrace.analyzer._driver import RunContext

__all__ = ["ANALYSIS", "AttributionResult", "Config", "SourceScore", "TraceAttribution"]

Method = Literal["leave-one-out", "hierarchical", "shapley", "contextcite"]

#: The run folder's unit journal and score cache.
JOURNAL = "attribution_journal.sqlite"
CACHE = "attribution_scores.sqlite"
#: An answer whose full-vs-empty gap is under this (nats) does not depend on its context.
INDEPENDENT = 1.0


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """What the attribution analysis reads and how it scores.

    Attributes:
        traces: trace files or folders.
        model_path: a GGUF file scored in-process (tier ``in-process``).
        endpoint: an OpenAI-compatible base URL returning prompt log-probabilities (tier
            ``endpoint``); exactly one of ``model_path`` and ``endpoint``.
        endpoint_model: the model name the endpoint serves.
        method: ``leave-one-out`` (k + 1 passes), ``hierarchical`` (items, then sentences),
            ``shapley`` (2^k passes, k <= 6) or ``contextcite``.
        max_passes: the pass budget of ``hierarchical``.
        n_ablations: random ablations of ``contextcite``.
        seed: seed of ``contextcite``'s masks.
        threads: CPU threads of the in-process model.
        n_ctx: context length of the in-process model.
    """

    traces: tuple[str, ...]
    model_path: str | None = None
    endpoint: str | None = None
    endpoint_model: str = "default"
    method: Method = "leave-one-out"
    max_passes: int = 24
    n_ablations: int = 32
    seed: int = 0
    threads: int = 1
    n_ctx: int = 4096

    def __post_init__(self) -> None:
        if (self.model_path is None) == (self.endpoint is None):
            raise ConfigError("give exactly one of model_path and endpoint", field="model_path")


class SourceScore(msgspec.Struct, frozen=True):
    """One source's score: its id, its score (nats) and the start of its text."""

    id: str
    score: float
    text: str


class TraceAttribution(msgspec.Struct, frozen=True, kw_only=True):
    """The attribution of one trace's answer.

    Attributes:
        trace_id: the trace.
        case_id: its case, if any.
        answer: the answer scored.
        tier: ``in-process`` or ``endpoint``.
        method: the method.
        passes: distinct ablations the method asked for.
        full: log-probability of the answer with every source.
        context_gap: full minus the empty-context log-probability.
        sources: per source, in prompt order.
    """

    trace_id: str
    case_id: str | None
    answer: str
    tier: str
    method: str
    passes: int
    full: float
    context_gap: float
    sources: tuple[SourceScore, ...]


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


@dataclass(frozen=True)
class Units(Plan[Unit]):
    """The plan: the units, and the traces left out with the reason."""

    units: tuple[Unit, ...]
    not_usable: dict[str, str] = field(default_factory=dict)


def plan(config: Config) -> Units:
    """One unit per trace whose prompt holds its evidence; the others named with why."""
    units: list[Unit] = []
    left: dict[str, str] = {}
    for trace in read_traces(list(config.traces), report=ReadReport()):
        try:
            context = trace_context(trace)
        except InputError as exc:
            left[trace.trace_id] = str(exc)
            continue
        units.append(Unit(trace.trace_id, trace.request.case_id, context))
    return Units(tuple(units), left)


def _scorer(config: Config) -> AnswerScorer:
    if config.endpoint is not None:
        from ._endpoint import EndpointScorer

        return EndpointScorer(config.endpoint, config.endpoint_model)
    from ._llama import LlamaScorer

    assert config.model_path is not None
    return LlamaScorer(config.model_path, n_ctx=config.n_ctx, n_threads=config.threads)


def _attribute(config: Config, score: ContextScorer) -> Attribution:
    context = score.context
    if config.method == "leave-one-out":
        return leave_one_out(score, context.k)
    if config.method == "shapley":
        return exact_shapley(score, context.k)
    if config.method == "hierarchical":
        split, groups = context.split()
        return hierarchical(
            ContextScorer(score.scorer, split, score.cache), groups, max_passes=config.max_passes
        )
    score([(True,) * context.k])  # the full prompt: how many tokens the answer has
    return context_cite(
        score, context.k, n_tokens=score.answer_tokens, n_ablations=config.n_ablations,
        seed=config.seed,
    )  # fmt: skip


async def run(units: Sequence[Unit], config: Config, context: RunContext) -> AttributionResult:
    """Score every unit (journaled per trace; a re-run resumes)."""
    scorer = _scorer(config)
    cache = ScoreCache(context.out / CACHE)
    lock = threading.Lock()  # one model, one evaluation at a time

    def attribute(unit: Unit) -> TraceAttribution:
        with lock:
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
            context_gap=found.full - empty, sources=sources,
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
    left = units.not_usable if isinstance(units, Units) else {}
    return AttributionResult(rows=tuple(rows), not_usable=dict(left))


def _top(row: TraceAttribution) -> SourceScore:
    return max(row.sources, key=lambda s: s.score)


def _concentration(row: TraceAttribution) -> float:
    """The top source's share of the positive scores (1: one source carries the answer)."""
    positive = [s.score for s in row.sources if s.score > 0]
    return max(positive) / sum(positive) if positive else 0.0


def write_report(result: AttributionResult, out: Path) -> Path:
    """``attribution.json`` (the result) and ``attribution.md`` (for people)."""
    write(out / "attribution.json", result)
    lines = ["# Attribution", "", reading(result), ""]
    for row in result.rows:
        top = _top(row)
        lines += [
            f"## {row.case_id or row.trace_id}",
            "",
            f"Answer: {row.answer!r} ({row.method}, tier {row.tier}, {row.passes} passes; "
            f"context gap {row.context_gap:.2f} nats"
            + (", does not depend on its context" if row.context_gap < INDEPENDENT else "")
            + f"; concentration {_concentration(row):.2f})",
            "",
            f"Top evidence: `{top.id}` ({top.score:+.2f} nats): {top.text}",
            "",
            "| source | score (nats) |",
            "| --- | --- |",
            *(f"| `{s.id}` | {s.score:+.3f} |" for s in row.sources),
            "",
        ]
    for trace_id, why in result.not_usable.items():
        lines.append(f"- not attributed: {trace_id}: {why}")
    path = out / "attribution.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reading(result: AttributionResult) -> str:
    """One paragraph: how many answers, how many rest on their context, how concentrated."""
    n = len(result.rows)
    if not n:
        return "No answer was attributed."
    dependent = [r for r in result.rows if r.context_gap >= INDEPENDENT]
    concentrated = sum(_concentration(r) >= 0.5 for r in dependent)
    tiers = ", ".join(sorted({r.tier for r in result.rows}))
    return (
        f"{n} answer(s) attributed ({tiers} tier); {len(dependent)} depend on their context "
        f"(full vs empty context > {INDEPENDENT:g} nat), and in {concentrated} of those one "
        "source carries at least half of the positive attribution."
        + (f" {len(result.not_usable)} trace(s) not attributed." if result.not_usable else "")
    )


def nothing_measured(result: AttributionResult) -> str | None:
    """Why nothing was attributed (the first reasons), else None."""
    if result.rows:
        return None
    why = "; ".join(f"{t}: {r}" for t, r in list(result.not_usable.items())[:3])
    return "no trace could be attributed" + (f" ({why})" if why else "")


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
)
