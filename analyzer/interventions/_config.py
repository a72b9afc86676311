"""The configuration record of an intervention run: what ``groundtrace interventions`` takes.

:class:`Config` is what ``groundtrace analyze interventions --config FILE.toml`` decodes and
what the ``interventions`` command builds from its options; planning, replay and the estimate
read it as it is; :func:`~._tuning.plan_settings` checks every value (the one place they are
checked) and derives what the planner draws with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

import msgspec

from groundtrace.analyzer._settings import ModelCalls, Replay, ReplayKwargs

if TYPE_CHECKING:
    from ._tuning import Tuning

__all__ = ["Config", "HardnessLevel"]

#: A replacement-hardness level, or ``any``.
HardnessLevel = Literal["any", "easy", "medium", "hard"]


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
        from ._tuning import DEFAULTS

        return DEFAULTS
