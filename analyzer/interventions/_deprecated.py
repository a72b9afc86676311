"""The interventions' older public ways in, kept for a release beside the one driver.

Each warns (a :class:`DeprecationWarning` naming its replacement and the release that removes
it) and then does what the analysis does: :func:`run_interventions` and
:func:`run_interventions_async` run :data:`~groundtrace.analyzer.interventions.ANALYSIS`
through :func:`~groundtrace.analyzer.run_analysis` (the run folder locked, its journal
resumed, the reports written), their :class:`RunConfig` standing in for the config's
settings; :func:`estimate_requests` and :func:`plan_run` plan as :func:`plan` does. They
start no event loop of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import deprecated
from groundtrace.analyzer.executor import Executor, UnitJournal
from groundtrace.analyzer.llm import ChatRequest

from ._config import Config
from ._engine import ItemPlan
from ._estimate import endpoint_replay_only, unit_requests
from ._plan import plan_items
from ._run import InterventionsResult, Progress, RunConfig, checked_mode

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun

__all__ = ["estimate_requests", "plan_run", "run_interventions", "run_interventions_async"]

_SINCE, _REMOVE_IN = "0.2.0", "0.3.0"


class _Given(Config, frozen=True, kw_only=True):
    """A :class:`Config` whose settings are a :class:`RunConfig` given as is (the older
    drivers' richer record: retry policy, timeout, axes, statistics, role thresholds)."""

    settings: RunConfig

    def run_config(self) -> RunConfig:
        """The given settings (the replay way and the concurrency checked)."""
        checked_mode(self.settings)
        return self.settings


def _given(
    traces: Sequence[str | Path],
    config: RunConfig,
    cases_path: str | Path | None,
    pool_dataset: str | Path | None,
) -> _Given:
    return _Given(
        out=str(config.out_dir),
        traces=tuple(map(str, traces)),
        cases=None if cases_path is None else str(cases_path),
        pool_dataset=None if pool_dataset is None else str(pool_dataset),
        settings=config,
    )


def _replays(progress: Progress | None) -> Callable[[str, int, int | None], None] | None:
    """The driver's progress callback forwarding the replay units' (done, total)."""
    if progress is None:
        return None
    report = progress

    def forward(phase: str, done: int, total: int | None) -> None:
        if total is not None:
            report(done, total)

    return forward


def _result(done: AnalysisRun[InterventionsResult]) -> InterventionsResult:
    assert done.result is not None  # not an estimate
    return done.result


@deprecated(since=_SINCE, remove_in=_REMOVE_IN, use="groundtrace.analyzer.run_analysis")
def run_interventions(
    traces: Sequence[str | Path],
    config: RunConfig,
    *,
    cases_path: str | Path | None = None,
    pool_dataset: str | Path | None = None,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> InterventionsResult:
    """Run the interventions on ``traces`` into ``config.out_dir`` and write the reports.

    Deprecated: ``run_analysis(ANALYSIS, Config(...), out=...)``. The replay units are handed
    to ``executor`` (default: local, ``config.concurrency`` in flight); ``progress`` is called
    with (done, total) as replay units complete.

    Raises:
        RunFolderBusyError: another run holds the run folder.
        ConfigError: bad options or run folder.
        InputError: unreadable traces, case file or pool dataset.
        ReplayError: the replay cannot be set up (e.g. entry point not importable).
    """
    from groundtrace.analyzer import run_analysis

    from ._shape import ANALYSIS

    given = _given(traces, config, cases_path, pool_dataset)
    done = run_analysis(
        ANALYSIS, given, out=config.out_dir, executor=executor, concurrency=config.concurrency,
        progress=_replays(progress),
    )  # fmt: skip
    return _result(done)


@deprecated(since=_SINCE, remove_in=_REMOVE_IN, use="groundtrace.analyzer.run_analysis_async")
async def run_interventions_async(
    traces: Sequence[str | Path],
    config: RunConfig,
    *,
    cases_path: str | Path | None = None,
    pool_dataset: str | Path | None = None,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> InterventionsResult:
    """:func:`run_interventions`, awaited (deprecated: ``await run_analysis_async(...)``)."""
    from groundtrace.analyzer import run_analysis_async

    from ._shape import ANALYSIS

    given = _given(traces, config, cases_path, pool_dataset)
    done = await run_analysis_async(
        ANALYSIS, given, out=config.out_dir, executor=executor, concurrency=config.concurrency,
        progress=_replays(progress),
    )  # fmt: skip
    return _result(done)


@deprecated(
    since=_SINCE,
    remove_in=_REMOVE_IN,
    use="groundtrace.analyzer.run_analysis(ANALYSIS, config, out=..., estimate=True)",
)
def estimate_requests(
    traces: Sequence[str | Path],
    config: RunConfig,
    *,
    cases_path: str | Path | None = None,
    pool_dataset: str | Path | None = None,
) -> tuple[list[ChatRequest], int]:
    """The requests of the replay units still to run, and how many the journal holds.

    Nothing is created: the journal is read only when the run folder has one.

    Raises:
        ConfigError: not endpoint replay (function replay calls the app's own model client,
            which the estimate cannot see), or bad options.
        InputError: unreadable traces, case file or pool dataset.
    """
    endpoint_replay_only(config.endpoint if config.mode() == "endpoint" else None)
    plans = plan_items(traces, config, cases_path=cases_path, pool_dataset=pool_dataset)
    path = Path(config.out_dir) / "journal.sqlite"
    journal = UnitJournal(path, lock=False) if path.exists() else None  # read only
    try:
        return unit_requests(plans, config, journal)
    finally:
        if journal is not None:
            journal.close()


@deprecated(
    since=_SINCE, remove_in=_REMOVE_IN, use="groundtrace.analyzer.interventions.plan(Config)"
)
def plan_run(
    traces: Sequence[str | Path],
    config: RunConfig,
    *,
    cases_path: str | Path | None = None,
    pool_dataset: str | Path | None = None,
) -> list[ItemPlan]:
    """The item plans (and their replay units) a run of ``traces`` would make; nothing is
    written.

    Raises:
        InputError: unreadable traces, case file or pool dataset.
    """
    return list(plan_items(traces, config, cases_path=cases_path, pool_dataset=pool_dataset))
