"""What an intervention run's :class:`~._config.Config` does not say: the settings no option
sets (:class:`Tuning`), and what the planner draws with, every value of the config checked
(:func:`plan_settings`, the one place they are checked)."""

from __future__ import annotations

from dataclasses import dataclass, field

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.llm import RetryPolicy
from groundtrace.analyzer.stats import StatsSettings

from ._axes import AxisSettings
from ._config import Config
from ._engine import PlanSettings, parse_operators
from ._pool import Hardness
from ._roles import RoleThresholds

__all__ = ["DEFAULTS", "Tuning", "plan_settings"]


def _hardness(value: str) -> Hardness | None:
    if value == "any":
        return None
    try:
        return Hardness(value)
    except ValueError:
        raise ConfigError(f"use any, easy, medium or hard, got {value!r}") from None


@dataclass(frozen=True, slots=True)
class Tuning:
    """The settings of a run that no option or config file sets (the SPEC's defaults): only
    the deprecated ``RunConfig`` changes them (until 0.3.0).

    Attributes:
        api_key: key for the endpoint (placeholder when ``None``).
        retry: retry policy of the model client (``None``: its default).
        axes: F1 threshold and divergence weights.
        stats: bootstrap/permutation settings (B = 5000, seed 42).
        thresholds: role thresholds.
        random_target_seed: seed of the random-target control.
        replacement_seed: seed of the replacement draw within the hardness cell.
    """

    api_key: str | None = None
    retry: RetryPolicy | None = None
    axes: AxisSettings = field(default_factory=AxisSettings)
    stats: StatsSettings = field(default_factory=StatsSettings)
    thresholds: RoleThresholds = field(default_factory=RoleThresholds)
    random_target_seed: int = 42
    replacement_seed: int = 42


#: The settings of a run no option sets.
DEFAULTS = Tuning()


def plan_settings(config: Config) -> PlanSettings:
    """What the planner draws with, every value of ``config`` checked first (the one place).

    Raises:
        ConfigError: no traces, both replay ways, an unknown operator or hardness, a rate
            limit or ceiling without endpoint replay, an unreadable call profile.
    """
    if not config.traces:
        raise ConfigError("no trace files or folders given", field="traces")
    tuning = config._tuning()
    plan = PlanSettings(
        operators=parse_operators(config.operators),
        model_seed=config.seed,
        random_target_seed=tuning.random_target_seed,
        replacement_seed=tuning.replacement_seed,
        similarity=_hardness(config.similarity),
        relevance=_hardness(config.relevance),
        recompute_original=config.recompute_original,
    )
    paced = config.rate_limit is not None or config.calls().budget is not None
    if config.endpoint is None and paced:
        raise ConfigError(  # the replayed app's own calls do not go through the client
            "--rate-limit, --max-calls and --max-cost need endpoint replay (--endpoint)",
            field="--endpoint",
        )
    if config.replay is not None and config.endpoint is not None:
        raise ConfigError("choose exactly one of --replay ENTRYPOINT and --endpoint URL")
    return plan
