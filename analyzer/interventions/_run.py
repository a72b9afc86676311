"""Replaying an intervention run's replay units, resumably, and analysing them (SPEC 4.1-4.2).

:func:`replay_journaled` (what the analysis's ``run`` does, the driver having locked the run
folder and opened its journal) replays the replay units the journal does not hold yet (function
or endpoint replay, on the run's executor) and writes into the run folder:

* ``journal.sqlite`` -- every replay unit's result (resume repeats none that completed);
* ``llm_cache.sqlite`` -- model calls of endpoint replay (zero repeated calls);
* ``counterfactual_traces/`` -- τ̃ as OTLP-JSON lines, linked to the originals, one trace per
  replay unit (a resumed run first removes those its journal does not hold).

The reports (``results.jsonl``, ``summary.json``, ``summary.md``, ``report.html``) are the
analysis's ``write_report``. A replay unit that fails (model call failed after retries, the app
raised...) is a recorded failure of that unit, excluded from the statistics and counted in
the report; the run goes on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import Executor, LocalExecutor, UnitJournal
from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy
from groundtrace.analyzer.replay import (
    CounterfactualRecorder,
    EndpointReplayer,
    FunctionReplayer,
    ReplayUnit,
    UnitResult,
    journaled_trace_ids,
    keep_traces,
)
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors import Trace

from ._axes import AxisSettings
from ._engine import ItemPlan, PlanSettings
from ._plan import Items
from ._records import (
    CallCounts,
    InterventionSummary,
    ReplayRow,
    ReplaySettings,
    RunSeeds,
)
from ._roles import ItemRoles, RoleThresholds
from ._run_summary import analyse

__all__ = [
    "InterventionsResult",
    "Progress",
    "RunConfig",
    "checked_mode",
    "drop_unjournaled",
    "replay_journaled",
]

#: Called after each replay unit with (done, total).
Progress = Callable[[int, int], None]

RECORDED = "recorded"
#: The run folder's counterfactual traces.
COUNTERFACTUALS = "counterfactual_traces"

_log = logging.getLogger("groundtrace.analyzer")


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Settings of one intervention run.

    Attributes:
        out_dir: the run folder (created; reused to resume).
        replay: ``recorded`` (the entry point on each trace) or a ``module:qualname`` for
            function replay; ``None`` when ``endpoint`` is given.
        endpoint: base URL of an OpenAI-compatible endpoint for endpoint replay.
        model: model name for endpoint replay (default: the captured one).
        api_key: key for the endpoint (placeholder when ``None``).
        kwarg_overrides: keyword arguments replacing recorded ones in function replay.
        plan: operators, seeds, hardness.
        axes: F1 threshold and divergence weights.
        stats: bootstrap/permutation settings (B = 5000, seed 42).
        thresholds: role thresholds.
        limit: use the first N eligible traces (those with a case id first, ordered by case id,
            then trace id).
        concurrency: replays in flight.
        timeout: seconds per model call attempt (endpoint replay).
        retry: retry policy of the model client.
        rate_limit: calls per second to the endpoint, shared by every worker (endpoint
            replay).
    """

    out_dir: Path
    replay: str | None = RECORDED
    endpoint: str | None = None
    model: str | None = None
    api_key: str | None = None
    kwarg_overrides: Mapping[str, Any] = field(default_factory=dict)
    plan: PlanSettings = field(default_factory=PlanSettings)
    axes: AxisSettings = field(default_factory=AxisSettings)
    stats: StatsSettings = field(default_factory=StatsSettings)
    thresholds: RoleThresholds = field(default_factory=RoleThresholds)
    limit: int | None = None
    concurrency: int = 4
    timeout: float = 120.0
    retry: RetryPolicy | None = None
    rate_limit: float | None = None

    def mode(self) -> str:
        """``function`` or ``endpoint``.

        Raises:
            ConfigError: neither or both ways were chosen.
        """
        if (self.endpoint is None) == (self.replay is None):
            raise ConfigError("choose exactly one of --replay ENTRYPOINT and --endpoint URL")
        return "endpoint" if self.endpoint is not None else "function"


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


def checked_mode(config: RunConfig) -> str:
    """The replay mode, the replay way and the concurrency checked.

    Raises:
        ConfigError: neither or both replay ways, a concurrency below 1.
    """
    mode = config.mode()
    if config.concurrency < 1:
        raise ConfigError("must be >= 1", field="--concurrency")
    return mode


def drop_unjournaled(out: Path, journal: UnitJournal) -> None:
    """Drop the counterfactual traces of replay units ``journal`` does not hold (they run
    again)."""
    dropped = keep_traces(out / COUNTERFACTUALS, journaled_trace_ids(journal))
    if dropped:
        _log.warning(
            "dropped %d counterfactual traces of units that did not complete in %s (they "
            "run again)", dropped, out,
        )  # fmt: skip


async def replay_journaled(
    items: Sequence[ItemPlan],
    config: RunConfig,
    journal: UnitJournal,
    *,
    has_gold: bool,
    executor: Executor,
    progress: Progress | None = None,
) -> InterventionsResult:
    """Replay the replay units of ``items`` that ``journal`` (the run folder's, opened and locked by
    the caller) does not hold, and analyse (what the driver's run of the analysis does)."""
    mode = checked_mode(config)
    drop_unjournaled(Path(config.out_dir), journal)
    return await _run(
        Items.of(items), config, mode, journal, has_gold=has_gold, progress=progress,
        executor=executor,
    )  # fmt: skip


def _replayer(
    config: RunConfig, mode: str, recorder: CounterfactualRecorder, cache: CallCache | None
) -> FunctionReplayer | EndpointReplayer:
    if mode == "endpoint":
        assert config.endpoint is not None and cache is not None
        client = ModelClient(
            config.endpoint, api_key=config.api_key, cache=cache,
            concurrency=config.concurrency, timeout=config.timeout, retry=config.retry,
            rate_limit=config.rate_limit,
        )  # fmt: skip
        return EndpointReplayer(recorder, client, model=config.model)
    entry = None if config.replay in (None, RECORDED) else config.replay
    return FunctionReplayer(
        recorder, entrypoint=entry, kwarg_overrides=config.kwarg_overrides,
        concurrency=config.concurrency,
    )  # fmt: skip


async def _run(
    items: Items,
    config: RunConfig,
    mode: str,
    journal: UnitJournal,
    *,
    has_gold: bool,
    progress: Progress | None,
    executor: Executor | None,
) -> InterventionsResult:
    out = Path(config.out_dir)
    recorder = CounterfactualRecorder(out / COUNTERFACTUALS)
    cache = CallCache(out / "llm_cache.sqlite") if mode == "endpoint" else None
    replayer = _replayer(config, mode, recorder, cache)
    not_replayable: dict[str, str] = {}
    usable: list[ItemPlan] = []
    for plan in items:
        why = replayer.check(plan.trace)
        if why is None:
            usable.append(plan)
        else:
            not_replayable[plan.trace.trace_id] = why
    units = [(u, p) for p in usable for u in p.units]
    results: dict[str, UnitResult] = {}
    counters = {"from_journal": 0, "run_now": 0}
    done = 0
    total = len(units)
    todo: list[tuple[ReplayUnit, ItemPlan]] = []
    for unit, plan in units:
        prior = journal.get(unit.key, UnitResult)
        if prior is not None:
            results[unit.key] = prior
            counters["from_journal"] += 1
            done += 1
        else:
            todo.append((unit, plan))
    if progress is not None:
        progress(done, total)
    work = _Replaying(replayer, {p.trace.trace_id: p.trace for _, p in todo})
    work.start_here()
    runner = executor or LocalExecutor(config.concurrency)
    fresh_calls: list[int] = []  # model calls of the replay units run now

    def arrived(index: int, result: UnitResult) -> None:
        nonlocal done
        unit = todo[index][0]
        journal.record(unit.key, result, ok=result.ok)
        results[unit.key] = result
        counters["run_now"] += 1
        fresh_calls.append(result.model_calls)
        done += 1
        if progress is not None:
            progress(done, total)

    try:
        await runner.map(work, [u for u, _ in todo], on_result=arrived)
    finally:
        await work.aclose()
        await replayer.aclose()
        if cache is not None:
            cache.close()
    analysis = analyse(
        usable, results, axes=config.axes, stats=config.stats, thresholds=config.thresholds
    )
    if isinstance(replayer, EndpointReplayer):
        s = replayer.client.stats
        calls = CallCounts(
            mode, total, counters["from_journal"], counters["run_now"], s.api_calls,
            s.cache_hits, s.coalesced, s.retries, s.snapshot(),
        )  # fmt: skip
    else:
        calls = CallCounts(
            mode, total, counters["from_journal"], counters["run_now"], sum(fresh_calls), 0
        )
    ps = config.plan
    assert analysis.statistics is not None
    summary = InterventionSummary(
        **msgspec.structs.asdict(analysis.statistics),
        items=len(usable),
        input=msgspec.structs.replace(items.input, not_replayable=not_replayable),
        gold="joined from the case file" if has_gold else "none (no --cases)",
        replay=ReplaySettings(
            mode, config.replay if mode == "function" else None, config.endpoint, config.model,
            0.0,
        ),
        calls=calls,
        seeds=RunSeeds(
            ps.operators, ps.model_seed, ps.random_target_seed, ps.replacement_seed,
            ps.similarity.value if ps.similarity else "any",
            ps.relevance.value if ps.relevance else "any", ps.recompute_original,
            config.stats.seed, config.stats.permutation_seed, config.stats.n_resamples,
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
