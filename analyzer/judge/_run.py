"""Running a judge over many cases and counting protocol errors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from groundtrace.analyzer.executor import Executor, LocalExecutor

from ._records import JudgeRunSummary, MetricSummary
from ._types import Judge, JudgeCase, JudgeResult, Metric

__all__ = ["judge_all", "summarize_results"]


async def judge_all(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    on_done: Callable[[JudgeResult], None] | None = None,
    executor: Executor | None = None,
) -> list[JudgeResult]:
    """Judge every case, one unit each; input order kept.

    Args:
        judge: the judge (it must pickle when ``executor`` is a cluster).
        cases: the cases.
        on_done: called in this process as each result arrives.
        executor: what runs the cases (default: local, every case at once; the model client
            bounds the calls).
    """
    runner = executor or LocalExecutor(max(1, len(cases)))
    arrived = None if on_done is None else (lambda _i, result: on_done(result))
    return await runner.map(judge.judge, cases, on_result=arrived)


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
        nothing_measured=_nothing_measured(len(results), metrics),
    )


def _nothing_measured(cases: int, metrics: dict[str, MetricSummary]) -> str | None:
    """Why no score was measured (no case, every judgment a protocol error), else ``None``."""
    if not cases:
        return "no case to judge"
    if any(m.scored for m in metrics.values()):
        return None
    kinds: Counter[str] = Counter()
    for m in metrics.values():
        kinds.update(m.errors_by_kind)
    detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
    return f"every judgment of the {cases} case(s) was a protocol error ({detail or 'none scored'})"
