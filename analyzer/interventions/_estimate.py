"""``interventions --estimate``: the endpoint requests a run would make, computed without calling.

The units are planned exactly as :func:`run_interventions_async` plans them; units the run
folder's journal already holds make no request; every other unit's request is the one
endpoint replay would send (:func:`groundtrace.analyzer.replay._endpoint.unit_request`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groundtrace.analyzer._deprecation import deprecated
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.llm import ChatRequest
from groundtrace.analyzer.replay import UnitResult, unit_request

from ._engine import ItemPlan
from ._plan import _plan_run
from ._run import RunConfig

__all__ = ["estimate_requests", "unit_requests"]


@deprecated(
    since="0.2.0",
    remove_in="0.3.0",
    use="groundtrace.analyzer.run_analysis(ANALYSIS, config, out=..., estimate=True)",
)
def estimate_requests(
    traces: Sequence[str | Path],
    config: RunConfig,
    *,
    cases_path: str | Path | None = None,
    pool_dataset: str | Path | None = None,
) -> tuple[list[ChatRequest], int]:
    """The requests of the units still to run, and how many units the journal holds.

    Nothing is created: the journal is read only when the run folder has one.

    Raises:
        ConfigError: not endpoint replay (function replay calls the app's own model client,
            which the estimate cannot see), or bad options.
        InputError: unreadable traces, case file or pool dataset.
    """
    if config.mode() != "endpoint":
        raise ConfigError(
            "--estimate needs endpoint replay (--endpoint): in function replay the app makes "
            "its own model calls",
            field="--estimate",
        )
    plans = _plan_run(traces, config, cases_path=cases_path, pool_dataset=pool_dataset)
    path = Path(config.out_dir) / "journal.sqlite"
    journal = UnitJournal(path, lock=False) if path.exists() else None  # read only
    try:
        return unit_requests(plans, config, journal)
    finally:
        if journal is not None:
            journal.close()


def unit_requests(
    plans: Sequence[ItemPlan], config: RunConfig, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int]:
    """The requests of the units of ``plans`` that ``journal`` does not hold, and how many it
    holds."""
    requests: list[ChatRequest] = []
    done = 0
    for plan in plans:
        for unit in plan.units:
            if journal is not None and journal.get(unit.key, UnitResult) is not None:
                done += 1
                continue
            request = unit_request(unit, plan.trace, config.model)
            if isinstance(request, ChatRequest):  # else the unit fails without a call
                requests.append(request)
    return requests, done
