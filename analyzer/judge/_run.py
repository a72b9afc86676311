"""Running a judge over many cases and counting protocol errors."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence

import msgspec

from groundtrace.analyzer.executor import Executor, LocalExecutor

from ._cases import NOTHING_GROUNDS
from ._records import JudgeRunSummary, MetricSummary, NotJudgeable
from ._types import Judge, JudgeCase, Judgment, Metric

__all__ = ["judge_all", "summarize_results"]


async def _judge_one(judge: Judge, case: JudgeCase) -> Judgment:
    """The judgment of ``case``, stating what it was judged against."""
    result = await judge.judge(case)
    return msgspec.structs.replace(result, context=case.source.value)


async def judge_all(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    on_done: Callable[[Judgment], None] | None = None,
    executor: Executor | None = None,
) -> list[Judgment]:
    """Judge every case, one unit each; input order kept. Each judgment states its context
    (retrieved documents, tool results or both).

    Args:
        judge: the judge (it must pickle when ``executor`` is a cluster).
        cases: the cases.
        on_done: called in this process as each result arrives.
        executor: what runs the cases (default: local, every case at once; the model client
            bounds the calls).
    """
    runner = executor or LocalExecutor(max(1, len(cases)))
    arrived = None if on_done is None else (lambda _i, result: on_done(result))
    return await runner.map(functools.partial(_judge_one, judge), cases, on_result=arrived)


def summarize_results(
    results: Sequence[Judgment],
    threshold: float,
    *,
    not_judgeable: Sequence[NotJudgeable] = (),
    not_applicable: Sequence[NotJudgeable] = (),
) -> JudgeRunSummary:
    """Per-metric score summaries and protocol-error counts by kind, with the traces not
    judgeable and those the judge does not apply to."""
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
        not_judgeable=tuple(not_judgeable),
        not_applicable=tuple(not_applicable),
        contexts=dict(Counter(r.context for r in results if r.context is not None)),
        nothing_measured=_nothing_measured(
            len(results), metrics, len(not_judgeable), len(not_applicable)
        ),
    )


def _nothing_measured(
    cases: int, metrics: dict[str, MetricSummary], not_judgeable: int, not_applicable: int
) -> str | None:
    """Why no score was measured (no case, every trace not applicable, every judgment a
    protocol error), else ``None``."""
    if not cases and not_applicable and not not_judgeable:
        return (
            f"not applicable: {NOTHING_GROUNDS} -- none of the {not_applicable} trace(s) "
            "retrieved a document or called a tool, so nothing can ground their answers (the "
            "judge scores an answer against the retrieved documents or tool results it rests on)"
        )
    if not cases:
        return "no case to judge"
    if any(m.scored for m in metrics.values()):
        return None
    kinds: Counter[str] = Counter()
    for m in metrics.values():
        kinds.update(m.errors_by_kind)
    detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
    return f"every judgment of the {cases} case(s) was a protocol error ({detail or 'none scored'})"
