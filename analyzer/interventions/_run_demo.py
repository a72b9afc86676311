"""The interventions step of ``groundtrace demo``: replay the demo's traces by function."""

from __future__ import annotations

from pathlib import Path

from ._records import InterventionSummary
from ._run import Progress, RunConfig, run_interventions

__all__ = ["run_interventions_for_demo"]


def run_interventions_for_demo(
    out_dir: Path,
    *,
    dataset: Path | None = None,
    limit: int | None = None,
    concurrency: int = 2,
    progress: Progress | None = None,
) -> InterventionSummary:
    """Run every operator on the demo's traces (``OUT/traces``, ``OUT/cases.jsonl``).

    Function replay of the recorded entry point; replacement candidates from the HotpotQA
    dataset the demo ran on (default: the sample shipped with the example app). Results go to
    ``OUT/interventions/``.

    Returns:
        The run summary (what ``groundtrace interventions --json`` prints).
    """
    if dataset is None:
        from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

        dataset = DEFAULT_DATASET
    config = RunConfig(out_dir=out_dir / "interventions", limit=limit, concurrency=concurrency)
    result = run_interventions(
        [out_dir / "traces"],
        config,
        cases_path=out_dir / "cases.jsonl",
        pool_dataset=dataset,
        progress=progress,
    )
    return result.summary
