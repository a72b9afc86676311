"""The path checks' verdicts for write-back: each case's path status on its root span.

A status's score: ``pass`` passes (1.0), every failed status fails (0.0); ``not_required``
and ``not_applicable`` are no verdict and have no score. The explanation gives the case's
issues and call errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from groundtrace.analyzer.writeback import Linked, Verdict
from groundtrace.sdk import semconv as sc

from ._run import PathReport
from ._types import PathStatus

__all__ = ["path_verdicts", "status_score"]

#: Path statuses that are no verdict (no score).
UNSCORED: Final = frozenset({PathStatus.NOT_REQUIRED.value, PathStatus.NOT_APPLICABLE.value})


def status_score(status: str) -> float | None:
    """The score of a path status: passed, failed, or ``None`` for no verdict."""
    if status in UNSCORED:
        return None
    return Verdict.PASSED if status == PathStatus.PASS.value else Verdict.FAILED


def path_verdicts(report: PathReport, roots: Mapping[str, str]) -> Linked:
    """The path status of every case with its issues and call errors.

    ``roots`` maps a trace id to its root span
    (:func:`~groundtrace.analyzer.writeback.root_spans`).
    """

    def items() -> Iterator[Verdict | str]:
        for v in report.verdicts:
            span = None if v.trace_id is None else roots.get(v.trace_id)
            if v.trace_id is None or span is None:
                yield v.case_id
                continue
            why = [str(i.get("message", i.get("status", ""))) for i in v.issues]
            why += [e.message for e in v.call_errors]
            yield Verdict(
                v.trace_id,
                span,
                sc.GT_EVALUATION_PATH_STATUS,
                case_id=v.case_id,
                label=v.status.value,
                score=status_score(v.status.value),
                explanation="; ".join(w for w in why if w) or None,
            )

    return Linked.collect(items())
