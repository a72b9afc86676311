"""The records of the gate and the command paths in demo reports of format 1.5 and earlier.

Deprecated since 0.2.0, removed in 0.3.0: each analysis's run is an entry of
``DemoReport.analyses`` (its report holds the rest).
"""

from __future__ import annotations

import msgspec

from groundtrace.analyzer.paths import PathMetrics

__all__ = ["DemoGate", "DemoPaths"]


class DemoGate(msgspec.Struct, frozen=True, kw_only=True):
    """The gate decision between the demo's two app versions (format 1.5 and earlier).

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
    """The document agent's command-path report (format 1.5 and earlier).

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
