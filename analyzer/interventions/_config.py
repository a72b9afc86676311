"""The configuration record of an intervention run: what ``groundtrace interventions`` takes.

:class:`Config` is what ``groundtrace analyze interventions --config FILE.toml`` decodes and
what the ``interventions`` command builds from its options; planning, replay and the estimate
read it as it is. :func:`plan_settings` checks every value (the one place they are checked)
and derives what the planner draws with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import msgspec

from groundtrace.analyzer._settings import ModelCalls, Replay, ReplayKwargs
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.llm import RetryPolicy
from groundtrace.analyzer.stats import StatsSettings

from ._axes import AxisSettings
from ._engine import PlanSettings, parse_operators
from ._pool import Hardness
from ._roles import RoleThresholds

__all__ = ["Config", "HardnessLevel", "Tuning", "plan_settings"]

#: A replacement-hardness level, or ``any``.
HardnessLevel = Literal["any", "easy", "medium", "hard"]


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


_DEFAULTS = Tuning()


class Config(ModelCalls, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One intervention run: its inputs, its run folder, how it replays and what it plans.

    The model-call fields (``concurrency``, ``timeout``, ``call_profile``, ``rate_limit``,
    ``max_calls``, ``max_cost``, ``prices``) are
    :class:`~groundtrace.analyzer._settings.ModelCalls`'; all but ``concurrency`` and
    ``timeout`` need endpoint replay (the replayed app's own calls do not go through the
    client). ``replay`` and ``replay_kwargs`` are function replay's
    (:data:`~groundtrace.analyzer._settings.Replay`,
    :data:`~groundtrace.analyzer._settings.ReplayKwargs`); with neither ``replay`` nor
    ``endpoint`` the trace's own entry point is replayed (``recorded``).

    A TOML file of it (``groundtrace analyze interventions --config run.toml``)::

        out = "runs/interventions"
        traces = ["runs/demo/traces"]
        cases = "runs/demo/cases.jsonl"
        operators = ["REMOVE", "ZERO"]

    Attributes:
        out: the run folder (created; reused to resume): its journal, model-call cache and
            counterfactual traces live there, and the CLI writes the reports there.
        traces: trace files or folders.
        cases: the case file (JSON lines) joined by case id: gold labels (``None``: no gold).
        pool_dataset: a HotpotQA-layout JSON-lines file supplying replacement candidates.
        endpoint: base URL of an OpenAI-compatible endpoint (endpoint replay; with neither
            this nor ``replay``, function replay of the trace's own entry point).
        model: the model name of endpoint replay (default: the captured one).
        operators: REMOVE, REPLACE, DUPLICATE, ZERO, RANDOM, JOINT (comma lists allowed;
            empty: all).
        limit: use the first N traces (those that name their case first).
        concurrency: replays in flight (None: the call profile's for the endpoint, else 4).
        seed: the seed sent to the model with every replay.
        similarity: replacement hardness on similarity to the target (``any`` or a level).
        relevance: replacement hardness on relevance to the query (``any`` or a level).
        recompute_original: also replay the unperturbed evidence and use it as the original.
        strict: refuse unreadable trace lines (else they are skipped and named).
    """

    out: str
    traces: tuple[str, ...]
    cases: str | None = None
    pool_dataset: str | None = None
    replay: Replay = None
    endpoint: str | None = None
    model: str | None = None
    replay_kwargs: ReplayKwargs = msgspec.field(default_factory=dict)
    operators: tuple[str, ...] = ()
    limit: int | None = None
    seed: int = 0
    similarity: HardnessLevel = "any"
    relevance: HardnessLevel = "any"
    recompute_original: bool = False
    strict: bool = False

    DEFAULT_CONCURRENCY: ClassVar[int] = 4

    def endpoint_url(self) -> str | None:
        """The endpoint of endpoint replay (its call-profile entry bounds the replays in
        flight); None for function replay."""
        return self.endpoint

    def _tuning(self) -> Tuning:
        """The settings no option sets: their defaults (the deprecated ``RunConfig`` gives
        its own)."""
        return _DEFAULTS


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
