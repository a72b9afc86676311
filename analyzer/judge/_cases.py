"""Judge cases from traces (the trace model τ) and from case files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from groundtrace.analyzer._foreign import analysable, lacks
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.model import Trace

from ._types import JudgeCase

__all__ = ["Unjudgeable", "case_from_trace", "cases_from_traces", "judge_case"]


@dataclass(frozen=True, slots=True)
class Unjudgeable:
    """A trace that cannot be judged, and why (it is reported, never scored).

    Attributes:
        case_id: case id or trace id.
        missing: what the trace lacks, each ``query``, ``answer`` or ``evidence content``
            followed by ``: `` and why (the span of its convention that is missing).
    """

    case_id: str
    missing: tuple[str, ...]


def case_from_trace(trace: Trace) -> JudgeCase | Unjudgeable:
    """The judge case of ``trace``: its query, the evidence it used, and its answer.

    The context is the selected evidence when the trace has a SELECT step, else every
    retrieved item (each id once, in trace order). Evidence captured without content cannot
    be judged. A trace of another instrumentation with no request query or answer is read
    from its LLM calls (:func:`~groundtrace.analyzer._foreign.analysable`); what it still
    lacks is named with the span of its convention that would carry it.
    """
    trace = analysable(trace)
    case_id = trace.request.case_id or trace.request.trace_id
    selected = set(trace.selected_ids) if trace.selected_ids is not None else None
    seen: set[str] = set()
    texts: list[str] = []
    for item in trace.evidence:
        key = item.id or item.content_hash or str(len(seen))
        if key in seen or (selected is not None and item.id not in selected):
            continue
        seen.add(key)
        if item.content:
            texts.append(item.content)
    missing = tuple(
        f"{name}: {lacks(trace, need)}"
        for name, need, absent in (
            ("query", "query", not trace.request.query),
            ("answer", "answer", trace.answer is None),
            ("evidence content", "documents", not texts),
        )
        if absent
    )
    if missing:
        return Unjudgeable(case_id, missing)
    assert trace.request.query is not None and trace.answer is not None
    return JudgeCase(case_id, trace.request.query, tuple(texts), trace.answer)


def cases_from_traces(traces: Iterable[Trace]) -> tuple[list[JudgeCase], list[Unjudgeable]]:
    """Judge cases of every trace, plus the traces that cannot be judged."""
    cases: list[JudgeCase] = []
    skipped: list[Unjudgeable] = []
    for trace in traces:
        out = case_from_trace(trace)
        if isinstance(out, JudgeCase):
            cases.append(out)
        else:
            skipped.append(out)
    return cases, skipped


def judge_case(case: Case, *, path: str | None = None, line: int | None = None) -> JudgeCase:
    """What the judge sees of a case read from a file: question, evidence texts, answer.

    Raises:
        InputError: the case is not a judge item, or lacks its question or its answer.
    """
    missing = None
    if case.response is None and not case.passages:
        missing = "context"
    elif case.question is None:
        missing = "question"
    elif case.response is None:
        missing = "answer"
    if missing is not None:
        raise InputError(
            f"case {case.case_id!r} has no {missing} to judge", path=path, line=line, field=missing
        )
    assert case.question is not None and case.response is not None
    texts = tuple(p.text for p in case.passages)
    return JudgeCase(case.case_id, case.question, texts, case.response)
