"""Running a judge over many cases and counting protocol errors."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence

from ._records import JudgeRunSummary, MetricSummary
from ._types import Judge, JudgeCase, JudgeResult, Metric

__all__ = ["judge_all", "summarize_results"]


async def judge_all(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    on_done: Callable[[JudgeResult], None] | None = None,
) -> list[JudgeResult]:
    """Judge every case concurrently (the model client bounds the calls); input order kept."""

    async def one(case: JudgeCase) -> JudgeResult:
        result = await judge.judge(case)
        if on_done is not None:
            on_done(result)
        return result

    return list(await asyncio.gather(*(one(c) for c in cases)))


def summarize_results(results: Sequence[JudgeResult], threshold: float) -> JudgeRunSummary:
    """Per-metric score summaries and protocol-error counts by kind."""
    metrics: dict[str, MetricSummary] = {}
    for metric in Metric:
        values = [r.scores[metric] for r in results if metric in r.scores]
        kinds = Counter(e.kind.value for r in results for e in r.errors if e.metric is metric)
        metrics[metric.value] = MetricSummary(
            scored=len(values),
            protocol_errors=sum(kinds.values()),
            errors_by_kind=dict(sorted(kinds.items())),
            mean=round(sum(values) / len(values), 4) if values else None,
            passed=sum(v >= threshold for v in values),
            failed=sum(v < threshold for v in values),
        )
    return JudgeRunSummary(
        cases=len(results),
        needs_review=sum(r.needs_review for r in results),
        threshold=threshold,
        metrics=metrics,
    )
