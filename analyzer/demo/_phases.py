"""The demo's offline analyses after the app runs: the release gate and the command paths.

* :func:`gate_phase`: the release gate between the app run (baseline) and a second run of the
  same app with another BM25 depth (candidate), on the demo's case file, with the
  ``balanced_default`` profile; reports go to ``OUT/gate/``.
* :func:`paths_phase`: the document-agent example (:mod:`groundtrace.examples.agent_docs`,
  deterministic, no model) run into ``OUT/agent/`` and its command-path report written to
  ``OUT/agent/paths/``; the masked failures are the cases whose answer text is right although
  the path that produced it failed.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.paths import PathMetrics

from ._hooks import run_through

__all__ = ["DemoGate", "DemoPaths", "gate_phase", "paths_phase"]

#: Gate profile the demo decides with.
GATE_PROFILE = "balanced_default"


class DemoGate(msgspec.Struct, frozen=True, kw_only=True):
    """The gate decision between the demo's two app versions.

    Attributes:
        baseline: app version of the baseline run.
        candidate: app version of the candidate run.
        candidate_traces: where the candidate run's traces are.
        profile: the gate profile used.
        decision: promote, manual_review, block or not_evaluable.
        exit_code: what ``groundtrace gate run`` exits with for this decision.
        reasons: why (case-level reasons, then the statistics note).
        report: the gate's ``report.json``.
    """

    baseline: str
    candidate: str
    candidate_traces: str
    profile: str
    decision: str
    exit_code: int
    reasons: tuple[str, ...]
    report: str


class DemoPaths(msgspec.Struct, frozen=True, kw_only=True):
    """The document agent's command-path report.

    Attributes:
        traces: the agent's traces.
        report: the report's ``report.json``.
        cases: cases validated.
        metrics: path pass rate, citation precision/recall, quadrants, masked failures.
    """

    traces: str
    report: str
    cases: int
    metrics: PathMetrics


def gate_phase(
    cases_path: Path,
    baseline_traces: Path,
    candidate_traces: Path,
    out_dir: Path,
    *,
    versions: tuple[str, str],
) -> DemoGate:
    """Decide whether the candidate run may replace the baseline (``groundtrace gate run``)."""
    from groundtrace.analyzer import gate

    config = gate.Config(
        baseline=(str(baseline_traces),),
        candidate=(str(candidate_traces),),
        cases=str(cases_path),
        profile=GATE_PROFILE,
    )
    run, path = run_through(gate.ANALYSIS, config, out_dir)
    report = run.report
    note = (report.statistics_note,) if report.statistics_note else ()
    return DemoGate(
        baseline=versions[0],
        candidate=versions[1],
        candidate_traces=str(candidate_traces),
        profile=GATE_PROFILE,
        decision=report.decision.value,
        exit_code=report.exit_code,
        reasons=(*report.case_level.reasons, *note),
        report=str(path),
    )


def paths_phase(out_dir: Path) -> DemoPaths:
    """Run the document agent into ``out_dir`` and validate its command paths."""
    from groundtrace.analyzer import paths
    from groundtrace.examples.agent_docs.app import EXAMPLE_DIR, run

    run(out_dir)
    config = paths.Config(
        traces=(str(out_dir / "traces"),),
        cases=str(EXAMPLE_DIR / "cases.jsonl"),
        tools_config=str(EXAMPLE_DIR / "tools.toml"),
    )
    result, path = run_through(paths.ANALYSIS, config, out_dir / "paths")
    if result.read_errors:
        raise InputError(f"the agent's traces do not read back: {result.read_errors[0]}")
    report = result.report
    return DemoPaths(
        traces=str(out_dir / "traces"), report=str(path), cases=len(report.verdicts),
        metrics=report.metrics,
    )  # fmt: skip
