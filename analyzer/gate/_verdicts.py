"""The gate's verdicts for write-back: each case decision of the candidate on its root span.

A decision's score: ``promote`` passes (1.0), ``manual_review`` is in between (0.5),
``block`` fails (0.0); ``not_evaluable`` is no verdict and has no score. The explanation
gives the case's reasons, prefixed with how its failure status changed from the baseline
(``new:``, ``known:``, ``fixed:``) when it did.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from groundtrace.analyzer.writeback import Linked, Verdict
from groundtrace.sdk import semconv as sc

from ._run import GateReport

__all__ = ["decision_score", "gate_verdicts"]

#: Score of each gate decision (``not_evaluable`` has none).
SCORES: Final = {
    "promote": Verdict.PASSED,
    "manual_review": Verdict.BETWEEN,
    "block": Verdict.FAILED,
}


def decision_score(decision: str) -> float | None:
    """The score of a case decision (``None`` for ``not_evaluable``)."""
    return SCORES.get(decision)


def gate_verdicts(
    report: GateReport, trace_ids: Mapping[str, str | None], roots: Mapping[str, str]
) -> Linked:
    """The candidate's case decisions, with their reasons and whether a failure is new.

    ``trace_ids`` maps a case id to the candidate trace it was decided on, ``roots`` a trace
    id to its root span (:func:`~groundtrace.analyzer.writeback.root_spans`).
    """
    changes = {} if report.changes is None else report.changes.by_case()

    def items() -> Iterator[Verdict | str]:
        for case in report.cases:
            trace_id = trace_ids.get(case.case_id)
            span = None if trace_id is None else roots.get(trace_id)
            if trace_id is None or span is None:
                yield case.case_id
                continue
            change = changes.get(case.case_id)
            prefix = "" if change is None else f"{change.kind.value}: "
            yield Verdict(
                trace_id,
                span,
                sc.GT_EVALUATION_GATE_CASE,
                case_id=case.case_id,
                label=case.decision.value,
                score=decision_score(case.decision.value),
                explanation=prefix + ("; ".join(case.reasons) or "all checks passed"),
            )

    return Linked.collect(items())
