"""Read the demo's traces back with the collectors and summarise them against the case file."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.analyzer.metrics import score_answer
from groundtrace.collectors import Trace
from groundtrace.collectors.readers import ReadReport, read_traces

__all__ = ["TraceSummary", "summarise_traces"]


@dataclass(slots=True)
class TraceSummary:
    """What the traces say, joined to the cases by case id, counted as they are read.

    The counters are those of :class:`~groundtrace.analyzer.demo.DemoReport` (``exact`` is
    its ``exact_match``), which is built from this summary. Beside them:

    Attributes:
        f1_sum: sum of token F1 over answered traces.
        confidence_sum: sum of recorded confidences (traces that have one).
        with_confidence: traces with a recorded confidence.
        per_case: one row per joined trace.
    """

    traces: int = 0
    spans: int = 0
    spans_by_action: Counter[str] = field(default_factory=Counter)
    findings_by_kind: Counter[str] = field(default_factory=Counter)
    read_errors: list[str] = field(default_factory=list)
    answered: int = 0
    unmatched_traces: int = 0
    missing_cases: list[str] = field(default_factory=list)
    correct: int = 0
    exact: int = 0
    f1_sum: float = 0.0
    confidence_sum: float = 0.0
    with_confidence: int = 0
    per_case: list[dict[str, Any]] = field(default_factory=list)


def _add_trace(summary: TraceSummary, trace: Trace, cases: Mapping[str, Mapping[str, Any]]) -> None:
    summary.traces += 1
    summary.spans += len(trace.steps)
    for step in trace.steps:
        summary.spans_by_action[step.action or "other"] += 1
    for finding in trace.findings:
        summary.findings_by_kind[finding.kind] += 1
    case_id = trace.request.case_id
    case = cases.get(case_id) if case_id is not None else None
    if case is None:
        summary.unmatched_traces += 1
        return
    answer = trace.answer
    row: dict[str, Any] = {
        "case_id": case_id,
        "trace_id": trace.trace_id,
        "answer": answer,
        "confidence": trace.confidence,
        "reference_answer": case["reference_answer"],
        "selected_ids": list(trace.selected_ids) if trace.selected_ids is not None else None,
    }
    if answer is not None:
        score = score_answer(answer, str(case["reference_answer"]))
        summary.answered += 1
        summary.correct += score.correct
        summary.exact += score.em
        summary.f1_sum += score.f1
        row.update(em=score.em, f1=round(score.f1, 4), correct=score.correct)
    if trace.confidence is not None:
        summary.confidence_sum += trace.confidence
        summary.with_confidence += 1
    summary.per_case.append(row)


def summarise_traces(traces_dir: Path, cases: Mapping[str, Mapping[str, Any]]) -> TraceSummary:
    """Read every trace under ``traces_dir`` and score its answer against the case file.

    Args:
        traces_dir: directory of OTLP-JSON lines files.
        cases: case-file rows by case id.

    Returns:
        The :class:`TraceSummary`; read errors are listed, not raised.
    """
    report = ReadReport()
    summary = TraceSummary()
    for trace in read_traces([traces_dir], report=report):
        _add_trace(summary, trace, cases)
    summary.read_errors = [str(error) for error in report.errors]
    seen = {row["case_id"] for row in summary.per_case}
    summary.missing_cases = [case_id for case_id in cases if case_id not in seen]
    return summary
