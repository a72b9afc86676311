"""``interventions --estimate``: the endpoint requests a run would make, computed without calling.

The replay units are those of the items the analysis plans; replay units the run folder's
journal already holds make no request; every other one's request is the one endpoint replay
would send
(:func:`groundtrace.analyzer.replay.unit_request`).
"""

from __future__ import annotations

from collections.abc import Sequence

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.llm import ChatRequest
from groundtrace.analyzer.replay import UnitResult, unit_request

from ._engine import ItemPlan

__all__ = ["endpoint_replay_only", "unit_requests"]


def endpoint_replay_only(endpoint: str | None) -> None:
    """Refuse an estimate of function replay (the app makes its own model calls, unseen).

    Raises:
        ConfigError: ``endpoint`` is ``None``.
    """
    if endpoint is None:
        raise ConfigError(
            "--estimate needs endpoint replay (--endpoint): in function replay the app makes "
            "its own model calls",
            field="--estimate",
        )


def unit_requests(
    plans: Sequence[ItemPlan], model: str | None, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int]:
    """The requests (to ``model``, default the captured one) of the replay units of ``plans``
    that ``journal`` does not hold, and how many it holds."""
    requests: list[ChatRequest] = []
    done = 0
    for plan in plans:
        for unit in plan.units:
            if journal is not None and journal.get(unit.key, UnitResult) is not None:
                done += 1
                continue
            request = unit_request(unit, plan.trace, model)
            if isinstance(request, ChatRequest):  # else the replay unit fails without a call
                requests.append(request)
    return requests, done
