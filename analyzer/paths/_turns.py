"""Multi-turn conversations: which tool call ran in which turn, and turn-by-turn verdicts.

A conversation run of a case is what the SDK and the readers produce:

* several traces of the case sharing a conversation id (``request.session_id``: the SDK's
  ``session_id`` argument of ``@gt.request``, written as ``groundtrace.session.id``,
  ``session.id`` and ``gen_ai.conversation.id``; OpenInference's ``session.id``; the GenAI
  conventions' ``gen_ai.conversation.id``): each trace is one turn, in the order their root
  spans started (then arrival order);
* one trace holding every turn: a REQUEST span per turn below the root (each tool call is in
  the turn of its nearest REQUEST ancestor), or else a transcript (tau-bench trajectories):
  a tool call is in the turn of the user messages the model call that asked for it had seen.

A case with :attr:`Case.turns` (BFCL multi-turn) is checked turn by turn, each turn against
its own required calls, reads and values (:func:`validate_case` on that turn's part of the
run); the case passes when every checked turn passes, and its status is the most specific of
the failed turns'. A turn with nothing required and no tool call is not checked
(``not_applicable``, as BFCL skips a turn whose ground truth is empty); a turn the run never
reached fails (``missing_command``) when it requires anything. A case without turns (a tau2
task: one set of actions for the whole conversation) is checked on the whole conversation,
and each issue about a tool call names the turn it ran in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from groundtrace.analyzer.cases import Case, Turn
from groundtrace.collectors.model import ToolCall, Trace
from groundtrace.sdk import semconv as sc

from ._quotes import DEFAULT_QUOTE_THRESHOLD
from ._tools_config import ToolsConfig
from ._types import STATUS_PRECEDENCE, CallError, CaseVerdict, PathStatus
from ._validate import validate_case

__all__ = ["conversation_order", "turn_of_calls", "validate_conversation"]


def conversation_order(trace: Trace) -> int:
    """Sort key of a turn trace: its root span's start (0 when unknown)."""
    return next((s.start_ns for s in trace.steps if s.parent_span_id is None), 0)


def turn_of_calls(trace: Trace) -> list[int]:
    """The turn (0-based) each tool call of one trace ran in (see the module docstring)."""
    steps = {s.span_id: s for s in trace.steps}
    requests = sorted(
        (s for s in trace.steps if s.action == sc.Action.REQUEST.value and s.parent_span_id),
        key=lambda s: (s.start_ns, s.span_id),
    )
    request_turn = {s.span_id: i for i, s in enumerate(requests)}
    llm_turn = {
        c.span_id: max(sum(m.role == "user" for m in c.messages) - 1, 0)
        for c in trace.llm_calls
        if c.messages
    }

    def turn(call: ToolCall) -> int:
        span: str | None = call.span_id
        seen: set[str] = set()
        while span is not None and span not in seen:
            seen.add(span)
            if span in request_turn:
                return request_turn[span]
            if not requests and span in llm_turn:
                return llm_turn[span]
            step = steps.get(span)
            span = step.parent_span_id if step is not None else None
        return 0

    return [turn(call) for call in trace.tool_calls]


def _part(trace: Trace, calls: Sequence[ToolCall], last: bool) -> Trace:
    """The part of ``trace`` one turn holds: its calls; citations and answer on the last."""
    if last:
        return msgspec.structs.replace(trace, tool_calls=tuple(calls))
    return msgspec.structs.replace(
        trace, tool_calls=tuple(calls), answer=None, cited_ids=(), quotes=()
    )


def _turn_parts(traces: Sequence[Trace], n_turns: int) -> list[Trace]:
    """One trace (or part of one) per turn of the run, in order."""
    if len(traces) > 1 or n_turns <= 1:
        return list(traces)
    (trace,) = traces
    turns = turn_of_calls(trace)
    count = max([*turns, 0]) + 1
    return [
        _part(
            trace,
            [c for c, t in zip(trace.tool_calls, turns, strict=True) if t == i],
            i == count - 1,
        )
        for i in range(count)
    ]


def _turn_case(case: Case, turn: Turn, index: int) -> Case:
    return Case(
        case_id=f"{case.case_id}#turn{index}",
        question=turn.question,
        required_calls=turn.required_calls,
        required_reads=turn.required_reads,
        required_values=turn.required_values,
    )


def _merged(traces: Sequence[Trace]) -> Trace:
    """A conversation of several traces as one: calls in turn order, the last answer."""
    first, last = traces[0], traces[-1]
    return msgspec.structs.replace(
        first,
        tool_calls=tuple(c for t in traces for c in t.tool_calls),
        llm_calls=tuple(c for t in traces for c in t.llm_calls),
        steps=tuple(s for t in traces for s in t.steps),
        answer=last.answer,
        cited_ids=tuple(dict.fromkeys(c for t in traces for c in t.cited_ids)),
        quotes=tuple(dict.fromkeys(q for t in traces for q in t.quotes)),
    )


def _whole(
    case: Case, traces: Sequence[Trace], tools: ToolsConfig | None, threshold: float
) -> CaseVerdict:
    """A case without turns on a whole conversation; issues name the turn of their call."""
    trace = _merged(traces) if len(traces) > 1 else traces[0]
    if len(traces) > 1:
        turns = [i for i, t in enumerate(traces) for _ in t.tool_calls]
    else:
        turns = turn_of_calls(trace)
    verdict = validate_case(case, trace, tools, quote_threshold=threshold)
    if max([*turns, 0]) == 0:
        return verdict

    def named(issue: dict[str, Any]) -> dict[str, Any]:
        index = issue.get("call_index")
        if isinstance(index, int) and 0 <= index < len(turns):
            return {
                **issue,
                "turn": turns[index],
                "message": f"turn {turns[index]}: {issue['message']}",
            }
        return issue

    details = {
        **verdict.details,
        "turn_of_call": turns,
        "conversation": [t.trace_id for t in traces],
    }
    return msgspec.structs.replace(
        verdict, issues=tuple(named(i) for i in verdict.issues), details=details
    )


def validate_conversation(
    case: Case,
    traces: Sequence[Trace],
    tools: ToolsConfig | None = None,
    *,
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD,
) -> CaseVerdict:
    """Validate one conversation run (its turn traces, in order) of ``case``.

    A case with :attr:`Case.turns` is checked turn by turn (see the module docstring); the
    verdict's ``details["turns"]`` lists each turn's status, trace and issues and
    ``details["failed_turns"]`` the turns that failed; every issue carries its ``turn``.
    """
    if not case.turns:
        return _whole(case, traces, tools, quote_threshold)
    parts = _turn_parts(traces, len(case.turns))
    verdicts: list[CaseVerdict | None] = []
    for i, turn in enumerate(case.turns):
        part = parts[i] if i < len(parts) else None
        verdicts.append(
            None
            if part is None
            else validate_case(
                _turn_case(case, turn, i), part, tools, quote_threshold=quote_threshold
            )
        )
    issues: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    errors: list[CallError] = []
    failed: list[int] = []
    statuses: set[PathStatus] = set()
    for i, (turn, verdict) in enumerate(zip(case.turns, verdicts, strict=True)):
        if verdict is None:
            needs = turn.required_calls or turn.required_reads or turn.required_values
            status = PathStatus.MISSING_COMMAND if needs else PathStatus.NOT_APPLICABLE
            turn_issues: tuple[dict[str, Any], ...] = ()
            if needs:
                turn_issues = (
                    {
                        "status": status.value,
                        "message": f"turn {i} never ran: the conversation has {len(parts)} turn(s)",
                    },
                )
            rows.append(
                {"turn": i, "trace_id": None, "status": status.value, "issues": list(turn_issues)}
            )
        else:
            status, turn_issues = verdict.status, verdict.issues
            errors.extend(verdict.call_errors)
            rows.append(
                {
                    "turn": i,
                    "trace_id": verdict.trace_id,
                    "status": status.value,
                    "issues": list(turn_issues),
                }
            )
        if status not in (PathStatus.PASS, PathStatus.NOT_APPLICABLE):
            failed.append(i)
            statuses.add(status)
        issues.extend({**x, "turn": i, "message": f"turn {i}: {x['message']}"} for x in turn_issues)
    checked = [r for r in rows if r["status"] != PathStatus.NOT_APPLICABLE.value]
    done = [v for v in verdicts if v is not None]
    last = parts[-1] if parts else traces[0]
    text = validate_case(
        msgspec.structs.replace(case, turns=(), require_path=False), last
    )  # the text channel: the case's reference against the last turn's answer
    details: dict[str, Any] = {
        "tool_calls": sum(len(t.tool_calls) for t in traces),
        "turns": rows,
        "failed_turns": failed,
        "conversation": [t.trace_id for t in traces],
    }
    if len(parts) > len(case.turns):
        details["extra_turns"] = len(parts) - len(case.turns)
    if not case.require_path:
        status = PathStatus.NOT_REQUIRED
        details["unchecked_issues"] = issues
        issues = []
    elif not checked:
        status = PathStatus.NOT_APPLICABLE
        details["not_applicable"] = "no tool calls in any turn"
    else:
        status = next((s for s in STATUS_PRECEDENCE if s in statuses), PathStatus.PASS)
    return CaseVerdict(
        case_id=case.case_id,
        trace_id=traces[0].trace_id,
        status=status,
        issues=tuple(issues),
        text_em=text.text_em,
        text_f1=text.text_f1,
        text_correct=text.text_correct,
        cited=text.cited,
        cited_read=tuple(dict.fromkeys(c for v in done for c in v.cited_read)),
        read=tuple(dict.fromkeys(r for v in done for r in v.read)),
        call_errors=tuple(errors),
        details=details,
    )
