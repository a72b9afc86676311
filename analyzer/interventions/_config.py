"""The configuration record of an intervention run: what ``groundtrace interventions`` takes.

:class:`Config` is what ``groundtrace analyze interventions --config FILE.toml`` decodes and
what the ``interventions`` command builds from its options; :meth:`Config.run_config` turns it
into the :class:`RunConfig` of :func:`run_interventions` (checking every value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from groundtrace.analyzer.errors import ConfigError

from ._engine import PlanSettings, parse_operators
from ._pool import Hardness
from ._run import RECORDED, RunConfig, checked_mode

__all__ = ["Config", "HardnessLevel"]

#: A replacement-hardness level, or ``any``.
HardnessLevel = Literal["any", "easy", "medium", "hard"]


def _hardness(value: str) -> Hardness | None:
    if value == "any":
        return None
    try:
        return Hardness(value)
    except ValueError:
        raise ConfigError(f"use any, easy, medium or hard, got {value!r}") from None


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One intervention run: its inputs, its run folder, how it replays and what it plans.

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
        replay: function replay: ``recorded`` (the trace's own entry point) or a
            ``module:qualname``; ``None`` is ``recorded`` unless ``endpoint`` is given.
        endpoint: base URL of an OpenAI-compatible endpoint (endpoint replay).
        model: the model name of endpoint replay (default: the captured one).
        replay_kwargs: keyword arguments replacing recorded ones in function replay.
        operators: REMOVE, REPLACE, DUPLICATE, ZERO, RANDOM, JOINT (comma lists allowed;
            empty: all).
        limit: use the first N traces (those that name their case first).
        concurrency: replays in flight (>= 1).
        rate_limit: calls per second to the endpoint (endpoint replay; ``None``: no limit).
        timeout: seconds per model call attempt (endpoint replay).
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
    replay: str | None = None
    endpoint: str | None = None
    model: str | None = None
    replay_kwargs: dict[str, str] = {}
    operators: tuple[str, ...] = ()
    limit: int | None = None
    concurrency: int = 4
    rate_limit: float | None = None
    timeout: float = 120.0
    seed: int = 0
    similarity: HardnessLevel = "any"
    relevance: HardnessLevel = "any"
    recompute_original: bool = False
    strict: bool = False

    def run_config(self) -> RunConfig:
        """These settings as the :class:`RunConfig` of :func:`run_interventions`.

        Raises:
            ConfigError: no traces, both replay ways, an unknown operator or hardness, a
                concurrency below 1, a timeout not above 0, a rate limit without endpoint
                replay.
        """
        if not self.traces:
            raise ConfigError("no trace files or folders given", field="traces")
        replay = RECORDED if self.replay is None and self.endpoint is None else self.replay
        plan = PlanSettings(
            operators=parse_operators(self.operators),
            model_seed=self.seed,
            similarity=_hardness(self.similarity),
            relevance=_hardness(self.relevance),
            recompute_original=self.recompute_original,
        )
        if not self.timeout > 0:
            raise ConfigError(f"must be > 0 seconds, got {self.timeout}", field="timeout")
        if self.rate_limit is not None and self.endpoint is None:
            raise ConfigError("--rate-limit needs endpoint replay (--endpoint)", field="--endpoint")
        config = RunConfig(
            out_dir=Path(self.out), replay=replay, endpoint=self.endpoint, model=self.model,
            kwarg_overrides=dict(self.replay_kwargs), plan=plan, limit=self.limit,
            concurrency=self.concurrency, rate_limit=self.rate_limit, timeout=self.timeout,
        )  # fmt: skip
        checked_mode(config)  # exactly one replay way, concurrency >= 1
        return config
