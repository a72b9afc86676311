"""The judge's verdicts for write-back: each metric's score of a traced case, or its error.

A verdict sits on the span that produced the trace's answer
(:func:`~groundtrace.analyzer.writeback.answer_spans`), with the completion's
``gen_ai.response.id``; its score is the one the judge measured, its label ``pass`` or
``fail`` against the threshold, its explanation the judge's rationale. A protocol error is a
verdict with no score, labelled ``protocol_error``, naming the error's kind.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from groundtrace.analyzer.writeback import Linked, Target, Verdict
from groundtrace.sdk import semconv as sc

from ._types import Judgment

__all__ = ["judge_verdicts"]


def judge_verdicts(
    results: Sequence[Judgment],
    trace_ids: Mapping[str, str],
    targets: Mapping[str, Target],
    threshold: float,
) -> Linked:
    """One verdict per judge metric and case: its score and pass/fail, or its protocol error.

    ``trace_ids`` maps a judge case id to its trace; cases read from a case file have none.
    ``targets`` (:func:`~groundtrace.analyzer.writeback.answer_spans`) names the span each
    trace's answer came from: the verdicts go there, with the completion's
    ``gen_ai.response.id``.
    """

    def items() -> Iterator[Verdict | str]:
        for result in results:
            trace_id = trace_ids.get(result.case_id)
            target = None if trace_id is None else targets.get(trace_id)
            if trace_id is None or target is None:
                yield result.case_id
                continue
            for metric, score in sorted(result.scores.items()):
                yield Verdict(
                    trace_id,
                    target.span_id,
                    f"{sc.GT_EVALUATION_JUDGE}.{metric.value}",
                    case_id=result.case_id,
                    label="pass" if score >= threshold else "fail",
                    score=score,
                    explanation=result.rationale,
                    response_id=target.response_id,
                )
            for error in result.errors:
                yield Verdict(
                    trace_id,
                    target.span_id,
                    f"{sc.GT_EVALUATION_JUDGE}.{error.metric.value}",
                    case_id=result.case_id,
                    label="protocol_error",
                    explanation=error.message,
                    error_type=error.kind.value,
                    response_id=target.response_id,
                )

    return Linked.collect(items())
