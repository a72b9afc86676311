"""Replaying an intervention run's replay units, resumably, and analysing them (SPEC 4.1-4.2).

:func:`run` (the analysis's ``run``: the driver has locked the run folder and opened its
journal) replays the replay units the journal does not hold yet (function or endpoint replay,
on the run's executor, through the driver's journaled map) and writes into the run folder:

* ``journal.sqlite`` -- every replay unit's result (resume repeats none that completed);
* ``llm_cache.sqlite`` -- model calls of endpoint replay (zero repeated calls);
* ``counterfactual_traces/`` -- τ̃ as OTLP-JSON lines, linked to the originals, one trace per
  replay unit (a resumed run first removes those its journal does not hold, and every run,
  once each unit has its result, those no result names).

The reports (``results.jsonl``, ``summary.json``, ``summary.md``, ``report.html``) are the
analysis's ``write_report``. A replay unit that fails (model call failed after retries, the app
raised...) is a recorded failure of that unit, excluded from the statistics and counted in
the report; the run goes on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.llm import CallCache, ModelClient
from groundtrace.analyzer.replay import (
    CounterfactualRecorder,
    EndpointReplayer,
    FunctionReplayer,
    ReplayUnit,
    UnitResult,
    journaled_trace_ids,
    keep_traces,
)
from groundtrace.collectors import Trace

from ._config import Config
from ._engine import ItemPlan
from ._plan import Items
from ._records import (
    CallCounts,
    InterventionSummary,
    ReplayRow,
    ReplaySettings,
    RunSeeds,
)
from ._roles import ItemRoles
from ._run_summary import analyse
from ._tuning import plan_settings

if TYPE_CHECKING:
    from groundtrace.analyzer import RunContext

__all__ = [
    "InterventionsResult",
    "drop_unjournaled",
    "run",
]

RECORDED = "recorded"
#: The run folder's counterfactual traces.
COUNTERFACTUALS = "counterfactual_traces"
#: The progress phase of the replay units.
PHASE = "replay units"

_log = logging.getLogger("groundtrace.analyzer")


@dataclass(slots=True)
class InterventionsResult:
    """What an intervention run did and found (the analysis's result).

    An *item* is one trace's plan (:class:`ItemPlan`: its target evidence and the
    perturbations planned on it); a *replay unit* is one replay of one perturbation
    (:class:`~groundtrace.analyzer.replay.ReplayUnit`): an item has several.

    Attributes:
        summary: the summary (also in ``summary.json``).
        rows: one row per replay unit (also in ``results.jsonl``).
        plans: the item plans (one per usable trace).
        out_dir: the run folder.
        roles: the evidence roles of each item's target (items with a REMOVE, REPLACE or
            DUPLICATE outcome).
    """

    summary: InterventionSummary
    rows: list[ReplayRow]
    plans: list[ItemPlan]
    out_dir: Path
    roles: list[tuple[ItemPlan, ItemRoles]] = field(default_factory=list)


def _keep_traces(out: Path, keep: set[str], why: str) -> None:
    """Drop the counterfactual traces not in ``keep``, saying how many and ``why``."""
    dropped = keep_traces(out / COUNTERFACTUALS, keep)
    if dropped:
        _log.warning("dropped %d counterfactual traces %s in %s", dropped, why, out)


def drop_unjournaled(out: Path, journal: UnitJournal) -> None:
    """Drop the counterfactual traces of replay units ``journal`` does not hold (they run
    again)."""
    why = "of units that did not complete (they run again)"
    _keep_traces(out, journaled_trace_ids(journal), why)


def _drop_unnamed(out: Path, results: Sequence[UnitResult]) -> None:
    """Once every unit has its result: drop the counterfactual traces no result names.

    The workers of a killed run can outlive its driver (a Ray worker finishing a unit it
    held) and write a unit's spans after this run dropped the unjournaled ones on opening
    the folder; that unit ran again here, so its trace would be there twice."""
    named = {r.counterfactual_trace_id for r in results if r.counterfactual_trace_id}
    why = "that no unit of this run names (written by the workers of an earlier run, stopped)"
    _keep_traces(out, named, why)


def _replayer(
    config: Config, recorder: CounterfactualRecorder, cache: CallCache | None
) -> FunctionReplayer | EndpointReplayer:
    if config.endpoint is not None:
        assert cache is not None
        tuning, calls = config._tuning(), config.calls()
        client = ModelClient(
            config.endpoint, api_key=tuning.api_key, cache=cache,
            concurrency=calls.concurrency(config.endpoint), timeout=config.timeout,
            retry=tuning.retry, rate_limit=calls.rate_limit(config.endpoint),
        )  # fmt: skip
        return EndpointReplayer(recorder, client, model=config.model)
    entry = None if config.replay in (None, RECORDED) else config.replay
    return FunctionReplayer(
        recorder, entrypoint=entry, kwarg_overrides=config.replay_kwargs,
        concurrency=config.in_flight(),
    )  # fmt: skip


async def run(
    items: Sequence[ItemPlan], config: Config, context: RunContext
) -> InterventionsResult:
    """Replay the items' replay units on the run's executor into the run folder, and analyse
    them.

    The driver (:func:`~groundtrace.analyzer.run_analysis`) has locked the run folder (the
    context's ``out``) and opened its journal: replay units it holds are not run again; each
    result is journaled as it arrives, so a killed run resumes. No report is written:
    :func:`write_report` writes them.

    Args:
        items: the items of :func:`plan` (a plain sequence of plans counts only those).
        config: the run's config.
        context: the run's executor, journal, budget and progress (``replay units``).

    Raises:
        ConfigError: a bad setting.
        ReplayError: the replay cannot be set up (e.g. the entry point does not import).
    """
    ps = plan_settings(config)
    journal = context.journal
    assert journal is not None  # ANALYSIS names its journal: the driver opened it
    out = context.out
    drop_unjournaled(out, journal)
    mode = "endpoint" if config.endpoint is not None else "function"
    listed = Items.of(items)
    recorder = CounterfactualRecorder(out / COUNTERFACTUALS)
    cache = CallCache(out / "llm_cache.sqlite") if mode == "endpoint" else None
    replayer = _replayer(config, recorder, cache)
    not_replayable: dict[str, str] = {}
    usable: list[ItemPlan] = []
    for plan in listed:
        why = replayer.check(plan.trace)
        if why is None:
            usable.append(plan)
        else:
            not_replayable[plan.trace.trace_id] = why
    units = [(u, p) for p in usable for u in p.units]
    held = {u.key for u, _ in units if (e := journal.entry(u.key)) is not None and e.ok}
    if not held:  # the driver's map reports the held ones
        context.progress(PHASE, 0, len(units))
    work = _Replaying(replayer, {p.trace.trace_id: p.trace for u, p in units if u.key not in held})
    work.start_here()
    try:
        results = await context.map(
            work, [u for u, _ in units], keys=[u.key for u, _ in units], kind=UnitResult,
            keep=lambda r: r.ok, phase=PHASE,
        )  # fmt: skip
    finally:
        await work.aclose()
        await replayer.aclose()
        if cache is not None:
            cache.close()
    _drop_unnamed(out, results)
    by_key = {u.key: r for (u, _), r in zip(units, results, strict=True)}
    tuning = config._tuning()
    analysis = analyse(
        usable, by_key, axes=tuning.axes, stats=tuning.stats, thresholds=tuning.thresholds
    )
    run_now = len(units) - len(held)
    if isinstance(replayer, EndpointReplayer):
        s = replayer.client.stats
        calls = CallCounts(
            mode, len(units), len(held), run_now, s.api_calls, s.cache_hits, s.coalesced,
            s.retries, s.snapshot(),
        )  # fmt: skip
    else:
        fresh = sum(r.model_calls for k, r in by_key.items() if k not in held)
        calls = CallCounts(mode, len(units), len(held), run_now, fresh, 0)
    stats = tuning.stats
    assert analysis.statistics is not None
    summary = InterventionSummary(
        **msgspec.structs.asdict(analysis.statistics),
        items=len(usable),
        input=msgspec.structs.replace(listed.input, not_replayable=not_replayable),
        gold="joined from the case file" if config.cases is not None else "none (no --cases)",
        replay=ReplaySettings(
            mode, (config.replay or RECORDED) if mode == "function" else None, config.endpoint,
            config.model, 0.0,
        ),
        calls=calls,
        seeds=RunSeeds(
            ps.operators, ps.model_seed, ps.random_target_seed, ps.replacement_seed,
            ps.similarity.value if ps.similarity else "any",
            ps.relevance.value if ps.relevance else "any", ps.recompute_original,
            stats.seed, stats.permutation_seed, stats.n_resamples,
        ),
    )  # fmt: skip
    return InterventionsResult(summary, analysis.rows, usable, out, analysis.roles)


@dataclass(slots=True)
class _Replaying:
    """One replay unit, recorded by whichever process runs it (it pickles for a cluster).

    The first replay unit in a process that has not started the recorder starts it there.
    """

    replayer: FunctionReplayer | EndpointReplayer
    traces: dict[str, Trace]
    started_in: int = 0

    def start_here(self) -> None:
        if self.started_in != os.getpid():
            self.replayer.recorder.start()
            self.started_in = os.getpid()

    async def __call__(self, unit: ReplayUnit) -> UnitResult:
        self.start_here()
        return await self.replayer.run(unit, self.traces[unit.trace_id])

    async def aclose(self) -> None:
        """Flush this process's counterfactual traces."""
        if self.started_in == os.getpid():
            self.replayer.recorder.close()
            self.started_in = 0
