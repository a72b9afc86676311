"""The interventions step of ``groundtrace demo``: replay the demo's traces by function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from groundtrace.analyzer import interventions, run_analysis
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.interventions import InterventionSummary

__all__ = ["CUE_R_OPERATORS", "run_interventions_for_demo"]

#: Called with (done, total) as replay units complete.
Progress = Callable[[int, int], None]

#: The demo's default operators: the CUE-R set (REMOVE, REPLACE and DUPLICATE the target).
CUE_R_OPERATORS: Final = ("REMOVE", "REPLACE", "DUPLICATE")


def run_interventions_for_demo(
    out_dir: Path,
    *,
    dataset: Path | None = None,
    limit: int | None = None,
    operators: Sequence[str] = CUE_R_OPERATORS,
    concurrency: int = 1,
    progress: Progress | None = None,
) -> InterventionSummary:
    """Run the operators on the demo's traces (``OUT/traces``, ``OUT/cases.jsonl``).

    Function replay of the recorded entry point; replacement candidates from the HotpotQA
    dataset the demo ran on (default: the sample shipped with the example app). The original
    of each item is the app's recorded answer (it is not asked again). One replay at a time by
    default: the local model server has one slot, and a trace's replays run back to back so
    consecutive prompts share their prefix. Results go to ``OUT/interventions/``.

    Args:
        out_dir: the demo's output directory.
        dataset: the HotpotQA file the demo ran on (replacement candidates).
        limit: the first N traces.
        operators: ``--operators`` names (REMOVE, REPLACE, DUPLICATE,
            ZERO, RANDOM, JOINT).
        concurrency: replays in flight.
        progress: called with (done, total) as units complete.

    Returns:
        The run summary (what ``groundtrace interventions --json`` prints).
    """
    if not operators:
        raise ConfigError("name at least one operator", field="--operators")
    if dataset is None:
        from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

        dataset = DEFAULT_DATASET
    config = interventions.Config(
        out=str(out_dir / "interventions"),
        traces=(str(out_dir / "traces"),),
        cases=str(out_dir / "cases.jsonl"),
        pool_dataset=str(dataset),
        operators=tuple(operators),
        limit=limit,
        concurrency=concurrency,
    )
    done = run_analysis(
        interventions.ANALYSIS, config, out=Path(config.out), concurrency=concurrency,
        progress=None if progress is None else lambda _phase, n, total: progress(n, total or 0),
    )  # fmt: skip
    assert done.result is not None  # not an estimate
    return done.result.summary
