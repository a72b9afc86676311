"""Judge cases from traces (the trace model τ) and from case files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from groundtrace.analyzer._foreign import analysable, document_span, lacks
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.model import Trace

from ._types import ContextSource, JudgeCase

__all__ = ["NOTHING_GROUNDS", "Unjudgeable", "case_from_trace", "cases_from_traces", "judge_case"]


#: The reason of a trace whose answer nothing can ground, as the reports show it.
NOTHING_GROUNDS: Final = "no retrieved documents or tool results recorded"


@dataclass(frozen=True, slots=True)
class Unjudgeable:
    """A trace that cannot be judged, and why (it is reported, never scored).

    Attributes:
        case_id: the case id the trace records (``None``: it records none).
        missing: what the trace lacks, each ``query``, ``answer`` or ``evidence content``
            followed by ``: `` and why (the span of its convention that is missing).
        trace_id: the trace's id.
        applicable: ``False`` when the trace has its query and answer but nothing that can
            ground the answer (:data:`NOTHING_GROUNDS`): the judge does not apply to it;
            ``True`` when it lacks its query or answer (the judge applies, the trace is
            incomplete).
    """

    case_id: str | None
    missing: tuple[str, ...]
    trace_id: str | None = None
    applicable: bool = True


def _documents(trace: Trace) -> list[str]:
    """The selected evidence when the trace has a SELECT step, else every retrieved item
    (each id once, in trace order): the texts of those captured with content."""
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
    return texts


def _no_content(trace: Trace) -> str:
    """Why ``trace`` has no text to ground its answer on."""
    if trace.evidence:
        return lacks(trace, "document content")
    if trace.tool_calls:
        return (
            "the tool results were recorded without their content "
            "(configure(capture_content=True) or capture_content=['tool_results'])"
        )
    return NOTHING_GROUNDS


def case_from_trace(trace: Trace) -> JudgeCase | Unjudgeable:
    """The judge case of ``trace``: its query, what grounds its answer, and its answer.

    The context is the retrieved documents (the selected evidence when the trace has a
    SELECT step, else every retrieved item) followed by the results of its tool calls (an
    agent's answer rests on them), each in trace order; the case states which
    (:class:`ContextSource`). Evidence or tool results captured without content cannot be
    judged. A trace with its query and answer that retrieved nothing and called no tool is
    *not applicable* (``applicable=False``): nothing can ground its answer. An incomplete
    trace (spans lost to unreadable input, a missing parent or root: ``Trace.incomplete``) is
    not judgeable, whatever it holds. A trace of another instrumentation with no request
    query or answer is read from its LLM calls
    (:func:`~groundtrace.analyzer._foreign.analysable`); what it still lacks is named with
    the span of its convention that would carry it.
    """
    incomplete = trace.incomplete
    if incomplete is not None:  # lost evidence is never judged
        why = f"incomplete trace: {incomplete.message}"
        return Unjudgeable(trace.request.case_id, (why,), trace.request.trace_id)
    trace = analysable(trace)
    case_id = trace.request.case_id
    documents = _documents(trace)
    tools = [call.result_content for call in trace.tool_calls if call.result_content]
    missing = tuple(
        f"{name}: {lacks(trace, need)}"
        for name, need, absent in (
            ("query", "query", not trace.request.query),
            ("answer", "answer", trace.answer is None),
        )
        if absent
    )
    if not (documents or tools):
        if not (trace.evidence or trace.tool_calls or missing):
            looked = f"{NOTHING_GROUNDS} (looked for {document_span(trace)} or a tool call)"
            return Unjudgeable(case_id, (looked,), trace.request.trace_id, False)
        missing = (*missing, f"evidence content: {_no_content(trace)}")
    if missing:
        return Unjudgeable(case_id, missing, trace.request.trace_id)
    assert trace.request.query is not None and trace.answer is not None
    source = (
        ContextSource.BOTH if documents and tools
        else ContextSource.DOCUMENTS if documents
        else ContextSource.TOOL_RESULTS
    )  # fmt: skip
    return JudgeCase(
        case_id or trace.request.trace_id,
        trace.request.query,
        (*documents, *tools),
        trace.answer,
        source,
    )


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
