"""The interventions' older public ways in, kept for a release beside the one driver.

Each warns (a :class:`DeprecationWarning` naming its replacement and the release that removes
it) and then does what the analysis does, on the :class:`Config` its :class:`RunConfig` makes
(:meth:`RunConfig.config`): :func:`run_interventions` and :func:`run_interventions_async` run
:data:`~groundtrace.analyzer.interventions.ANALYSIS` through
:func:`~groundtrace.analyzer.run_analysis` (the run folder locked, its journal resumed, the
reports written); :func:`estimate_requests` is :func:`estimate_run` of :func:`plan`, and
:func:`plan_run` is :func:`plan`. They start no event loop of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundtrace.analyzer._deprecation import deprecated
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.llm import ChatRequest, RetryPolicy
from groundtrace.analyzer.stats import StatsSettings

from ._axes import AxisSettings
from ._config import Config
from ._engine import ItemPlan, PlanSettings
from ._estimate import endpoint_replay_only
from ._roles import RoleThresholds
from ._run import RECORDED, InterventionsResult
from ._shape import ANALYSIS, estimate_run, plan
from ._tuning import Tuning

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun
    from groundtrace.analyzer.executor import Executor

__all__ = [
    "RunConfig",
    "estimate_requests",
    "plan_run",
    "run_interventions",
    "run_interventions_async",
]

_SINCE, _REMOVE_IN = "0.2.0", "0.3.0"

#: Called after each replay unit with (done, total).
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Settings of one intervention run (deprecated: :class:`Config`).

    Attributes:
        out_dir: the run folder (:attr:`Config.out`).
        replay: ``recorded`` or a ``module:qualname`` (function replay); ``None`` when
            ``endpoint`` is given.
        kwarg_overrides: :attr:`Config.replay_kwargs`.
        plan: operators, seeds (``model_seed``: :attr:`Config.seed`) and hardness.
        endpoint, model, limit, concurrency, timeout, rate_limit: as in :class:`Config`.
        api_key, retry, axes, stats, thresholds: as in :class:`Tuning` (no option sets them).
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

    def config(
        self,
        traces: Sequence[str | Path],
        cases_path: str | Path | None = None,
        pool_dataset: str | Path | None = None,
    ) -> Config:
        """These settings as the :class:`Config` of a run of ``traces`` (what the older
        drivers run).

        Raises:
            ConfigError: neither replay way chosen (both is refused when the config is
                checked).
        """
        if self.replay is None and self.endpoint is None:
            raise ConfigError("choose exactly one of --replay ENTRYPOINT and --endpoint URL")
        ps = self.plan
        tuning = Tuning(
            api_key=self.api_key, retry=self.retry, axes=self.axes, stats=self.stats,
            thresholds=self.thresholds, random_target_seed=ps.random_target_seed,
            replacement_seed=ps.replacement_seed,
        )  # fmt: skip
        return _Given(
            out=str(self.out_dir), traces=tuple(map(str, traces)),
            cases=None if cases_path is None else str(cases_path),
            pool_dataset=None if pool_dataset is None else str(pool_dataset),
            replay=self.replay, endpoint=self.endpoint, model=self.model,
            replay_kwargs=dict(self.kwarg_overrides), operators=ps.operators, limit=self.limit,
            concurrency=self.concurrency, rate_limit=self.rate_limit, timeout=self.timeout,
            seed=ps.model_seed, similarity=ps.similarity.value if ps.similarity else "any",
            relevance=ps.relevance.value if ps.relevance else "any",
            recompute_original=ps.recompute_original, given=tuning,
        )  # fmt: skip


class _Given(Config, frozen=True, kw_only=True):
    """A :class:`Config` with the settings of a :class:`RunConfig` that no option sets."""

    given: Tuning

    def _tuning(self) -> Tuning:
        return self.given


def _replays(progress: Progress | None) -> Callable[[str, int, int | None], None] | None:
    """The driver's progress callback forwarding the replay units' (done, total)."""
    if progress is None:
        return None
    report = progress

    def forward(phase: str, done: int, total: int | None) -> None:
        if total is not None:
            report(done, total)

    return forward


def _driven(
    traces: Sequence[str | Path],
    config: RunConfig,
    cases_path: str | Path | None,
    pool_dataset: str | Path | None,
    progress: Progress | None,
    executor: Executor | None,
) -> tuple[Config, dict[str, Any]]:
    """The config and the driver's keyword arguments of an older driver's call."""
    given = config.config(traces, cases_path, pool_dataset)
    return given, {
        "out": config.out_dir, "executor": executor, "concurrency": config.concurrency,
        "progress": _replays(progress),
    }  # fmt: skip


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

    given, driver = _driven(traces, config, cases_path, pool_dataset, progress, executor)
    return _result(run_analysis(ANALYSIS, given, **driver))


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

    given, driver = _driven(traces, config, cases_path, pool_dataset, progress, executor)
    return _result(await run_analysis_async(ANALYSIS, given, **driver))


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
    given = config.config(traces, cases_path, pool_dataset)
    endpoint_replay_only(given.endpoint)
    return estimate_run(plan(given), given)


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
    return list(plan(config.config(traces, cases_path, pool_dataset)))
