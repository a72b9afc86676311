"""The interventions in the one analysis shape: ``plan`` → ``run`` → ``write_report``.

:func:`plan` reads the config's traces and cases into the items (each with its replay units);
:func:`run` replays the units on the run's executor into the config's run folder (the driver
opens and locks it; its journal makes a re-run resume) and analyses them;
:func:`write_report` writes the records and reports; :func:`nothing_measured` and
:func:`verdicts` are what the driver exits 6 with and writes back. ``ANALYSIS`` ties them
together for :func:`~groundtrace.analyzer.run_analysis` (``groundtrace interventions`` and
``groundtrace analyze interventions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groundtrace.analyzer._analysis import Analysis
from groundtrace.analyzer.llm import ChatRequest

from ._config import Config
from ._demo import demo_config
from ._engine import ItemPlan
from ._estimate import endpoint_replay_only, unit_requests
from ._plan import plan
from ._reading import reading
from ._report import write_report
from ._run import InterventionsResult, run

if TYPE_CHECKING:
    from groundtrace.analyzer.executor import UnitJournal
    from groundtrace.analyzer.writeback import Linked

__all__ = ["ANALYSIS", "estimate_run", "nothing_measured", "plan", "run", "verdicts"]

#: The run folder's unit journal.
JOURNAL = "journal.sqlite"


def nothing_measured(result: InterventionsResult) -> str | None:
    """Why the run measured nothing (with the traces left out, first three named), else
    ``None``."""
    why = result.summary.nothing_measured
    if why is None:
        return None
    counts = result.summary.input
    left_out = {**counts.traces_not_usable, **counts.not_replayable}
    named = "; ".join(f"{t}: {r}" for t, r in list(left_out.items())[:3])
    return why + (f" ({len(left_out)} trace(s) not usable: {named})" if left_out else "")


def verdicts(result: InterventionsResult, config: Config) -> Linked:
    """The evidence roles of each item's target, on the retrieval span that returned it."""
    from ._verdicts import role_verdicts

    return role_verdicts(result)


def estimate_run(items: Sequence[ItemPlan], config: Config) -> tuple[list[ChatRequest], int]:
    """The endpoint requests of the replay units the run folder's journal does not hold yet,
    and how many replay units it holds; nothing is called or written.

    Raises:
        ConfigError: not endpoint replay (in function replay the app makes its own calls).
    """
    from groundtrace.analyzer.executor import UnitJournal

    endpoint_replay_only(config.endpoint)
    path = Path(config.out) / JOURNAL
    journal = UnitJournal(path, lock=False) if path.exists() else None  # read only
    try:
        return _estimate(items, config, journal)
    finally:
        if journal is not None:
            journal.close()


def _estimate(
    items: Sequence[ItemPlan], config: Config, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int]:
    """The ``estimate`` hook: :func:`estimate_run` against the journal the driver read."""
    endpoint_replay_only(config.endpoint)
    return unit_requests(items, config.model, journal)


def _run_folder(config: Config) -> str:
    return config.out


#: The interventions, for ``groundtrace analyze interventions`` and
#: ``get_analysis("interventions")``.
ANALYSIS: Analysis[Config, ItemPlan, InterventionsResult] = Analysis(
    name="interventions",
    title="Evidence utility by counterfactual replay: what removing, replacing, duplicating "
    "or zeroing each piece of evidence does to the answer",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    verdicts=verdicts,
    demo=demo_config,
    journal=JOURNAL,
    estimate=_estimate,
    run_folder=_run_folder,
)
