"""The one driver: :func:`run_analysis` runs any analysis end to end, the same way for all.

Every analysis (built-in or a plugin's) is run here and nowhere else: the config is planned,
the run folder ``out`` is locked, the analysis's unit journal opened (a re-run resumes), the
run's calls counted in its own ledger and held to its budget, progress reported, the units
run (``await analysis.run(units, config, context)``), the reports written, the verdicts
written back, and one exit code decided:

1. the analysis's own ``exit_code(result)`` when it asks for one (the gate's 10, 20, 30);
2. else 6 when ``nothing_measured(result)`` gives a reason (the reports are written);
3. else 0.

What the analysis's ``run`` receives is a :class:`RunContext` (executor, journal, budget,
ledger, progress, out), never a bare executor; ``run`` is ``async def``, and the library
starts no event loop of its own: :func:`run_analysis` does (``asyncio.run``), and refuses
inside a running loop (a notebook, an async service), where :func:`run_analysis_async` is
awaited instead. A ``run`` in the earlier form (a plain function of ``(units, config,
executor)``) is still accepted: it runs in a worker thread, so it works from a running loop
too, its lock and journal its own.

Usage::

    from pathlib import Path

    from groundtrace.analyzer import get_analysis, run_analysis

    paths = get_analysis("paths")
    config = paths.config(traces=("runs/demo/traces",), cases="runs/demo/path_cases.jsonl")
    done = run_analysis(paths, config, out=Path("out/paths"))
    print(done.reading, done.reports, done.exit_code)

    # in a notebook or an async service:  done = await run_analysis_async(paths, config, out=...)
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from groundtrace.analyzer.errors import ConfigError

if TYPE_CHECKING:
    from groundtrace.analyzer._analysis import Analysis
    from groundtrace.analyzer.executor import Executor, UnitJournal
    from groundtrace.analyzer.llm import Budget, Estimate, PriceTable, Usage, UsageLedger
    from groundtrace.analyzer.writeback import Linked

__all__ = ["AnalysisRun", "Progress", "RunContext", "run_analysis", "run_analysis_async"]

R = TypeVar("R")
U = TypeVar("U")
W = TypeVar("W")

#: Called as work completes, with (phase, done, total).
Progress = Callable[[str, int, int | None], None]
#: Sends the verdicts the callable makes to a backend (the CLI's ``--write-back``).
WriteBack = Callable[[Callable[[], "Linked"]], None]

#: The model-call cache an analysis keeps in its run folder (read by ``estimate``).
CACHE_NAME = "llm_cache.sqlite"


def _no_progress(phase: str, done: int, total: int | None) -> None:
    """Progress nobody listens to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext:
    """What an analysis's ``run`` gets from the driver.

    Attributes:
        executor: where the units run (this process or a Ray cluster); its stop condition is
            the run's budget.
        journal: the run folder's unit journal (``None``: the analysis keeps none); results
            kept there are not run again by a re-run.
        budget: the run's ceilings (``None``: none); it counts in its own ledger.
        ledger: the model calls of this run alone, by model.
        progress: called with (phase, done, total) as work completes.
        out: the run folder (locked by the driver for the whole run): the journal's and
            the call cache's, the analysis's ``run_folder(config)`` when it names one, else
            the folder the reports are written in.
    """

    executor: Executor
    journal: UnitJournal | None
    budget: Budget | None
    ledger: UsageLedger
    progress: Progress
    out: Path

    async def map(
        self,
        work: Callable[[U], Awaitable[W]],
        units: Sequence[U],
        *,
        keys: Sequence[str],
        kind: type[W],
        keep: Callable[[W], bool] = lambda _: True,
        phase: str = "units",
    ) -> list[W]:
        """``work(unit)`` on the executor for the units the journal does not hold; results
        in input order, each journaled under its key as it arrives (``keep`` rejects the
        failures a re-run retries) and reported as progress of ``phase``.

        Raises:
            BudgetReachedError: the budget stopped the run (what finished is journaled).
            RunStoppedError: a signal stopped it.
        """
        from groundtrace.analyzer.executor import run_journaled

        return await run_journaled(
            self.executor, work, units, keys, journal=self.journal, kind=kind, keep=keep,
            on_done=lambda done, total: self.progress(phase, done, total),
        )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalysisRun(Generic[R]):
    """What :func:`run_analysis` returns: the result and what became of it.

    Attributes:
        analysis: the analysis's name.
        result: its result (``None`` for an estimate: nothing ran).
        reports: the report files written (the main one first).
        exit_code: the one exit code (see the module docstring).
        reason: why nothing was measured, else ``None``.
        reading: the plain-language reading (empty for an estimate).
        calls: this run's model calls by model (its own ledger; retries included).
        timings: seconds spent planning, running and writing the reports.
        estimate: ``estimate=True``: what the units still to run would call, else ``None``.
        written_back: whether the verdicts were sent (``write_back`` given, something
            measured, the analysis has verdicts).
        units: how many units were planned.
    """

    analysis: str
    result: R | None
    reports: tuple[Path, ...] = ()
    exit_code: int = 0
    reason: str | None = None
    reading: str = ""
    calls: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    estimate: Estimate | None = None
    written_back: bool = False
    units: int = 0


def run_analysis(
    analysis: Analysis[Any, Any, R],
    config: Any,
    *,
    out: str | Path,
    executor: Executor | None = None,
    budget: Budget | None = None,
    prices: PriceTable | None = None,
    estimate: bool = False,
    progress: Progress | None = None,
    write_back: WriteBack | None = None,
    concurrency: int | None = 4,
    units: Sequence[Any] | None = None,
) -> AnalysisRun[R]:
    """Run ``analysis`` on ``config`` into ``out``; the synchronous :func:`run_analysis_async`.

    Raises:
        ConfigError: called inside a running event loop (await :func:`run_analysis_async`
            there), or what :func:`run_analysis_async` raises.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise ConfigError(
            "run_analysis was called inside a running event loop (a notebook, an async "
            "service): use `await run_analysis_async(...)` there"
        )
    run = run_analysis_async(
        analysis, config, out=out, executor=executor, budget=budget, prices=prices,
        estimate=estimate, progress=progress, write_back=write_back, concurrency=concurrency,
        units=units,
    )  # fmt: skip
    return asyncio.run(run)


async def run_analysis_async(
    analysis: Analysis[Any, Any, R],
    config: Any,
    *,
    out: str | Path,
    executor: Executor | None = None,
    budget: Budget | None = None,
    prices: PriceTable | None = None,
    estimate: bool = False,
    progress: Progress | None = None,
    write_back: WriteBack | None = None,
    concurrency: int | None = 4,
    units: Sequence[Any] | None = None,
) -> AnalysisRun[R]:
    """Run ``analysis`` on ``config`` end to end into the run folder ``out``.

    Args:
        analysis: the analysis (:func:`~groundtrace.analyzer.get_analysis`).
        config: its config record.
        out: the report folder, locked while the run runs; the run folder too (its journal
            and cache), unless the analysis's ``run_folder(config)`` names another.
        executor: where the units run (default: this process, ``concurrency`` in flight;
            closed here only when made here).
        budget: ``--max-calls`` / ``--max-cost`` (``None``: the config's own ceilings, a
            :class:`~groundtrace.analyzer._settings.ModelCalls` record's, else none).
        prices: the price table an estimate is priced with (default: the budget's, else
            the config's).
        estimate: plan only, and return what the units still to run would call (nothing is
            called, created or written).
        progress: called with (phase, done, total) as work completes.
        write_back: sends the verdicts after the reports are written, when something was
            measured (``None``: nothing is sent).
        concurrency: units in flight of the executor made here (``None``: every unit at
            once, when something else, a model client, bounds the calls).
        units: run these (some of the plan's) instead of planning.

    Raises:
        ConfigError: ``write_back`` for an analysis without verdicts; ``estimate`` for one
            without an estimate hook or unit key; a bad setting.
        RunFolderBusyError: another run holds ``out``.
        BudgetReachedError: the budget stopped the run (exit 5; what finished is kept).
        RunStoppedError: a signal stopped it (a re-run resumes).
        WriteBackError: the backend refused the verdicts (the reports are written).
        InputError: what the analysis's plan and run raise on bad input.
    """
    from groundtrace.analyzer._settings import ModelCalls
    from groundtrace.analyzer.llm import UsageLedger, counting

    if isinstance(config, ModelCalls) and (budget is None or prices is None):
        calls = config.calls()  # the record's ceilings and prices, unless given here
        budget = calls.budget if budget is None else budget
        prices = calls.prices if prices is None else prices
    folder = Path(out)
    if write_back is not None and analysis.verdicts is None:
        raise ConfigError(f"{analysis.name} has no per-case results to write back",
                          field="--write-back")  # fmt: skip
    timings: dict[str, float] = {}
    home = folder if analysis.run_folder is None else Path(analysis.run_folder(config))
    if estimate:
        if analysis.estimate is None and analysis.unit_key is None:
            raise ConfigError(f"{analysis.name} gives no estimate (its record names neither "
                              "an estimate hook nor a unit key)", field="--estimate")  # fmt: skip
        planned = await _plan(analysis, config, units, timings)
        found = await _estimate(analysis, planned, config, home, prices or _prices(budget))
        return AnalysisRun(analysis=analysis.name, result=None, estimate=found,
                           timings=timings, units=len(planned))  # fmt: skip
    ledger = UsageLedger()
    report = progress or _no_progress
    run: Any = analysis.run  # the async context form, or the earlier blocking one
    with counting(ledger):
        if inspect.iscoroutinefunction(run):
            # the folder is locked first: a run into a folder in use is refused at once
            async with _run_folder(analysis, home, folder) as journal:
                planned = await _plan(analysis, config, units, timings)
                clock = time.perf_counter()
                async with _executor(executor, concurrency, len(planned), budget) as runner:
                    context = RunContext(executor=runner, journal=journal, budget=budget,
                                         ledger=ledger, progress=report, out=home)  # fmt: skip
                    result: R = await run(planned, config, context)
                timings["run"] = time.perf_counter() - clock
                clock = time.perf_counter()
                reports = _write(analysis, result, folder)
        else:  # the earlier form: a blocking run that locks its own folder
            planned = await _plan(analysis, config, units, timings)
            clock = time.perf_counter()
            async with _executor(executor, concurrency, len(planned), budget) as runner:
                result = await asyncio.to_thread(run, planned, config, runner)
            timings["run"] = time.perf_counter() - clock
            clock = time.perf_counter()
            from groundtrace.analyzer._runlock import RunFolderLock

            with RunFolderLock.acquire(folder):
                reports = _write(analysis, result, folder)
    timings["report"] = time.perf_counter() - clock
    reason = analysis.nothing_measured(result)
    sent = False
    if write_back is not None and reason is None and (verdicts := analysis.verdicts) is not None:
        write_back(lambda: verdicts(result, config))
        sent = True
    own = 0 if analysis.exit_code is None else analysis.exit_code(result)
    code = own or (6 if reason is not None else 0)
    return AnalysisRun(
        analysis=analysis.name, result=result, reports=reports, exit_code=code, reason=reason,
        reading=analysis.reading(result), calls=ledger.entries(), timings=timings,
        written_back=sent, units=len(planned),
    )  # fmt: skip


async def _plan(
    analysis: Analysis[Any, Any, Any],
    config: Any,
    units: Sequence[Any] | None,
    timings: dict[str, float],
) -> Sequence[Any]:
    """The units: ``units`` when given, else the plan (it reads files, and may start a loop
    of its own: off the event loop)."""
    clock = time.perf_counter()
    planned = await asyncio.to_thread(analysis.plan, config) if units is None else units
    timings["plan"] = time.perf_counter() - clock
    return planned


def _prices(budget: Budget | None) -> PriceTable | None:
    return None if budget is None else budget.prices


def _write(analysis: Analysis[Any, Any, R], result: R, folder: Path) -> tuple[Path, ...]:
    return (analysis.write_report(result, folder),)


@contextlib.asynccontextmanager
async def _executor(
    given: Executor | None, concurrency: int | None, units: int, budget: Budget | None
) -> AsyncIterator[Executor]:
    """The executor the run uses (made here: ``concurrency`` units in flight, ``None``: every
    unit at once), its stop condition the budget for the run's time."""
    from groundtrace.analyzer.executor import LocalExecutor, RayExecutor

    in_flight = max(1, units) if concurrency is None else concurrency
    runner: Executor = LocalExecutor(in_flight) if given is None else given
    own = runner if isinstance(runner, LocalExecutor | RayExecutor) else None
    before = None if own is None else own.stop_when
    if own is not None and budget is not None:
        own.stop_when = budget
    if isinstance(runner, RayExecutor) and runner.carry is None:  # the workers' model calls
        from groundtrace.analyzer.llm import WorkerCalls

        runner.carry = WorkerCalls()
    if budget is not None:
        budget.start()
    try:
        if budget is not None:
            with budget.watching():
                yield runner
        else:
            yield runner
    finally:
        if own is not None:
            own.stop_when = before
        if given is None:
            runner.close()


@contextlib.asynccontextmanager
async def _run_folder(
    analysis: Analysis[Any, Any, Any], home: Path, reports: Path
) -> AsyncIterator[UnitJournal | None]:
    """The run folder ``home`` and the report folder locked (created), and the analysis's
    journal in the run folder opened."""
    from groundtrace.analyzer._runlock import RunFolderLock
    from groundtrace.analyzer.executor import UnitJournal

    with contextlib.ExitStack() as held:
        held.enter_context(RunFolderLock.acquire(home))
        if reports.resolve() != home.resolve():
            held.enter_context(RunFolderLock.acquire(reports))
        if analysis.journal is None:
            yield None
            return
        journal = UnitJournal(home / analysis.journal, lock=False)  # the driver holds it
        try:
            yield journal
        finally:
            journal.close()


async def _estimate(
    analysis: Analysis[Any, Any, Any],
    units: Sequence[Any],
    config: Any,
    folder: Path,
    prices: PriceTable | None,
) -> Estimate:
    """What the units the journal does not hold would call; nothing is created."""
    from groundtrace.analyzer.executor import UnitJournal
    from groundtrace.analyzer.llm import CallCache, ChatRequest, estimate_calls

    path = None if analysis.journal is None else folder / analysis.journal
    journal = UnitJournal(path, lock=False) if path is not None and path.exists() else None
    cache_path = folder / CACHE_NAME
    cache = CallCache(cache_path) if cache_path.exists() else None
    try:
        requests: Sequence[ChatRequest] = ()
        done = 0
        dependent: list[int] = []  # calls that depend on replies not made yet, if told
        if analysis.estimate is not None:
            asked = analysis.estimate(units, config, journal)  # or its coroutine
            requests, done, *dependent = await asked if inspect.isawaitable(asked) else asked
        elif journal is not None and analysis.unit_key is not None:
            keys = [analysis.unit_key(u) for u in units]
            done = sum(1 for k in keys if (e := journal.entry(k)) is not None and e.ok)
        return estimate_calls(requests, cache, prices, units_done=done, dependent=sum(dependent))
    finally:
        if journal is not None:
            journal.close()
        if cache is not None:
            cache.close()
