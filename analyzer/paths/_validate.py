"""Validate one trace against one path case: the text channel and the path channel.

What was *read* is exact: for a tool declared in the tools config, the values of its
resource arguments on a successful call (status ``ok``); for any other tool, the
``paths_read`` its TOOL span recorded (the SDK writes them only on success). A call that
failed, timed out or has no recorded result read nothing.

Path issues found (every one is kept in ``issues``, the status is the most specific, see
:data:`STATUS_PRECEDENCE`):

* ``not_applicable`` -- no tool call ran and the case declares no path (and requires no
  read, call or value): no command path to check (see :mod:`._applies`); nothing else is
  checked, never a failure;
* ``zero_call_citation`` -- the answer cites sources but no tool call ran at all (the case
  requires a read, a call or a value);
* ``timeout`` / ``tool_error`` -- a required read or call ran but timed out / failed (a
  call without a recorded result counts as failed); a call counts as the required one only
  when its arguments fit (the argument matcher of the required-call check), never by tool
  name alone;
* ``param_error`` -- the required tool ran, but with arguments outside the constraints (the
  BFCL-style error code says which; a call of it that also failed says so in the message);
  also a command outside ``allowed_commands`` or an extra successful call of an
  ``exclusive_tools`` tool;
* ``missing_command`` -- a required read or call never ran (or not in the required order);
* ``invalid_quote`` -- a cited source was never read successfully (even if it appears in
  the prompt or in search results: the evidence says where it was seen);
* ``fabricated_quote`` -- a quoted snippet does not occur (normalised, fuzzy, see
  :mod:`._quotes`) in the content returned by a successful read;
* ``unused_result`` -- a required value was returned by a successful tool call but neither
  the answer nor any model output shown to the user (multi-turn agents state values before
  their last message) carries it; values compare after the answer normalisation of
  :mod:`groundtrace.analyzer.metrics` (``$23,553`` carries ``23553``);
* ``missing_value`` -- a required value (a case's ``required_values``, tau-bench
  ``outputs``) that the answer and the model outputs never state, and that no successful
  tool call returned: a required value must be in the answer whatever its source;
* ``both_failed`` -- a command issue (timeout, tool_error, param_error, missing_command)
  and a citation issue (invalid_quote, fabricated_quote) in the same case.

A quote that cannot be checked because no read captured its content is listed in
``details["unverified_quotes"]`` (never a silent pass: the report counts them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.cases import Case, normalise_resource
from groundtrace.analyzer.metrics import normalise_answer, score_answer
from groundtrace.collectors.model import ToolCall, Trace

from ._applies import not_applicable
from ._calls import ExecutedCall, check_calls, diagnose_call
from ._quotes import DEFAULT_QUOTE_THRESHOLD, best_quote_match
from ._tools_config import ToolsConfig
from ._types import (
    STATUS_PRECEDENCE,
    CallError,
    CallErrorCode,
    CaseVerdict,
    PathStatus,
)

__all__ = ["CITATION_STATUSES", "COMMAND_STATUSES", "validate_case"]

#: Issues of the command part of the path channel.
COMMAND_STATUSES: Final = frozenset(
    {PathStatus.TIMEOUT, PathStatus.TOOL_ERROR, PathStatus.PARAM_ERROR, PathStatus.MISSING_COMMAND}
)
#: Issues of the citation part of the path channel.
CITATION_STATUSES: Final = frozenset({PathStatus.INVALID_QUOTE, PathStatus.FABRICATED_QUOTE})
_OK: Final = "ok"
_TIMEOUT: Final = "timeout"


def _failure_status(call: ToolCall) -> PathStatus:
    return PathStatus.TIMEOUT if call.status == _TIMEOUT else PathStatus.TOOL_ERROR


def _call_resources(call: ToolCall, tools: ToolsConfig) -> list[str]:
    if tools.declares(call.name):
        return tools.resources(call.name, call.arguments)
    return [normalise_resource(p) for p in call.paths_read]


def _seen_in(trace: Trace, resource: str, read_calls: set[int]) -> list[str]:
    places: list[str] = []
    if trace.request.query and resource in trace.request.query:
        places.append("the user query")
    for i, call in enumerate(trace.tool_calls):
        if i not in read_calls and call.result_content and resource in call.result_content:
            places.append(f"the result of {call.name} (call {i})")
    for llm in trace.llm_calls:
        if any(m.content and resource in m.content for m in llm.messages):
            places.append("a model prompt")
            break
    return places


def _issue(status: PathStatus, message: str, **evidence: Any) -> dict[str, Any]:
    return {"status": status.value, "message": message, **evidence}


def _text_channel(case: Case, trace: Trace) -> tuple[bool | None, float | None, bool | None]:
    if case.reference_answer is None:
        return None, None, None
    if trace.answer is None:
        return False, 0.0, False  # measured: the app gave no answer
    score = score_answer(trace.answer, case.reference_answer)
    return score.em, score.f1, score.fact_correct


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def validate_case(
    case: Case,
    trace: Trace,
    tools: ToolsConfig | None = None,
    *,
    quote_threshold: float = DEFAULT_QUOTE_THRESHOLD,
) -> CaseVerdict:
    """Validate ``trace`` against ``case`` (both channels, side by side).

    Args:
        case: the path case.
        trace: the trace of that case.
        tools: which tool arguments are resources read (default: none declared, so the
            spans' ``paths_read`` are used).
        quote_threshold: minimum fuzzy ratio of a quote match.

    Returns:
        The :class:`CaseVerdict` with the evidence behind its status.
    """
    tools = tools or ToolsConfig()
    em, f1, correct = _text_channel(case, trace)
    reason = not_applicable(case, trace) if case.require_path else None
    if reason is not None:
        return CaseVerdict(
            case_id=case.case_id,
            trace_id=trace.trace_id,
            status=PathStatus.NOT_APPLICABLE,
            text_em=em,
            text_f1=f1,
            text_correct=correct,
            cited=_unique(normalise_resource(c) for c in trace.cited_ids),
            details={"tool_calls": 0, "not_applicable": reason},
        )
    calls = trace.tool_calls
    read: list[str] = []
    read_calls: set[int] = set()
    contents: list[tuple[str, str]] = []
    uncaptured: list[str] = []
    for i, call in enumerate(calls):
        if call.status != _OK:
            continue
        resources = _call_resources(call, tools)
        if not resources:
            continue
        read_calls.add(i)
        read.extend(resources)
        for resource in resources:
            if call.result_content is not None:
                contents.append((resource, call.result_content))
            else:
                uncaptured.append(resource)
    read_set = set(read)
    cited = _unique(normalise_resource(c) for c in trace.cited_ids)
    cited_read = tuple(c for c in cited if c in read_set)
    required_cited = tuple(r for r in case.required_reads if r in read_set and r in cited)
    issues: list[dict[str, Any]] = []
    details: dict[str, Any] = {"tool_calls": len(calls), "quotes": []}

    # --- commands: required reads ------------------------------------------------------
    for resource in case.required_reads:
        if resource in read_set:
            continue
        tried = [
            i
            for i, call in enumerate(calls)
            if call.status != _OK
            and (
                resource in tools.resources(call.name, call.arguments)
                or resource in (normalise_resource(p) for p in call.paths_read)
            )
        ]
        if tried:
            call = calls[tried[0]]
            issues.append(
                _issue(
                    _failure_status(call),
                    f"required read {resource} ran but {call.status or 'recorded no result'}"
                    + (f" ({call.error_type})" if call.error_type else ""),
                    resource=resource,
                    call_index=tried[0],
                    call_id=call.call_id,
                )
            )
        else:
            issues.append(
                _issue(
                    PathStatus.MISSING_COMMAND,
                    f"required read {resource} never ran successfully"
                    + (f"; read instead: {sorted(read_set)}" if read_set else ""),
                    resource=resource,
                )
            )

    # --- commands: required calls (BFCL-style constraints) ----------------------------
    executed = [ExecutedCall(c.name or "", c.arguments or {}) for c in calls]
    ok_indices = [i for i, c in enumerate(calls) if c.status == _OK]
    call_errors: list[CallError] = []
    matched: set[int] = set()
    if case.required_calls:
        match = check_calls(
            case.required_calls, executed, ordered=case.ordered, candidates=ok_indices
        )
        call_errors.extend(match.errors)
        details["matched_calls"] = {str(r): e for r, e in match.pairs.items()}
        for err in match.errors:
            r = err.required_index
            if r is None:
                continue
            required = case.required_calls[r]
            if err.code is CallErrorCode.WRONG_ORDER:
                issues.append(
                    _issue(PathStatus.MISSING_COMMAND, err.message, required=to_builtins(required))
                )
                continue
            failed_fit = [
                i
                for i, c in enumerate(calls)
                if c.status != _OK and diagnose_call(required, executed[i]) is None
            ]
            # a failed call is "the required call ran but errored" only when its arguments
            # fit; a call of the same tool with other arguments is a parameter error
            same_name = [i for i in ok_indices if executed[i].name == required.name] or [
                i for i, c in enumerate(calls) if c.status != _OK and c.name == required.name
            ]
            if failed_fit:
                i = failed_fit[0]
                issues.append(
                    _issue(
                        _failure_status(calls[i]),
                        f"{required.name} ran but {calls[i].status or 'recorded no result'}"
                        + (f" ({calls[i].error_type})" if calls[i].error_type else ""),
                        call_index=i,
                        call_id=calls[i].call_id,
                        arguments=calls[i].arguments,
                    )
                )
            elif same_name:
                diagnosis = err
                if err.executed_index is None or err.code is CallErrorCode.MISSING_CALL:
                    diagnosis = (
                        diagnose_call(
                            required,
                            executed[same_name[0]],
                            required_index=r,
                            executed_index=same_name[0],
                        )
                        or err
                    )
                i = same_name[0] if diagnosis.executed_index is None else diagnosis.executed_index
                issues.append(
                    _issue(
                        PathStatus.PARAM_ERROR,
                        diagnosis.message
                        + (
                            ""
                            if calls[i].status == _OK
                            else f" (and that call {calls[i].status or 'recorded no result'})"
                        ),
                        code=diagnosis.code.value,
                        call_index=diagnosis.executed_index,
                        arguments=calls[i].arguments,
                        required=to_builtins(required),
                    )
                )
            else:
                issues.append(
                    _issue(
                        PathStatus.MISSING_COMMAND,
                        f"required call {required.name} never ran",
                        required=to_builtins(required),
                    )
                )
        matched = set(match.pairs.values())

    def refuse(code: CallErrorCode, message: str, i: int, **evidence: Any) -> None:
        """A call no requirement allows: a call error, and its parameter-error issue."""
        call_errors.append(CallError(code, message, None, i))
        issues.append(
            _issue(PathStatus.PARAM_ERROR, message, code=code.value, call_index=i, **evidence)
        )

    for i in ok_indices if case.exclusive_tools else ():
        if executed[i].name in case.exclusive_tools and i not in matched:
            why = (
                "ran with arguments no required call accepts"
                if case.required_calls
                else "ran, but the case requires no such call"
            )
            message = f"{executed[i].name} {why}"
            refuse(CallErrorCode.UNEXPECTED_CALL, message, i, arguments=calls[i].arguments)
    if case.allowed_commands is not None:
        for i, call in enumerate(calls):
            if call.name not in case.allowed_commands:
                message = f"{call.name} is not among the allowed commands"
                refuse(CallErrorCode.DISALLOWED_COMMAND, message, i)

    # --- citations ---------------------------------------------------------------------
    if cited and not calls:
        issues.append(
            _issue(
                PathStatus.ZERO_CALL_CITATION,
                f"the answer cites {list(cited)} but no tool call ran",
                cited=list(cited),
            )
        )
    for source in cited:
        if source not in read_set:
            seen = _seen_in(trace, source, read_calls)
            issues.append(
                _issue(
                    PathStatus.INVALID_QUOTE,
                    f"cited {source} was never read"
                    + (f" (seen only in {', '.join(seen)})" if seen else ""),
                    citation=source,
                    seen_in=seen,
                    read=sorted(read_set),
                )
            )
    unverified: list[str] = []
    for quote in trace.quotes:
        best = best_quote_match(quote, contents)
        record: dict[str, Any] = {"quote": quote}
        if best is not None:
            record |= {
                "source": best.source,
                "ratio": round(best.ratio, 4),
                "excerpt": best.excerpt,
            }
        details["quotes"].append(record)
        if best is not None and best.ratio >= quote_threshold:
            continue
        if best is None and uncaptured:
            unverified.append(quote)
            continue
        issues.append(
            _issue(
                PathStatus.FABRICATED_QUOTE,
                f"quote {quote!r} does not occur in what was read"
                + (
                    f" (best {best.ratio:.2f} in {best.source} < {quote_threshold})"
                    if best is not None
                    else " (nothing with content was read)"
                ),
                **record,
            )
        )
    details["unverified_quotes"] = unverified

    # --- results carried into the answer ---------------------------------------------------
    told = [trace.answer or ""] + [c.output_text for c in trace.llm_calls if c.output_text]
    told_norm = [f" {normalise_answer(t)} " for t in told]
    values: list[dict[str, Any]] = []
    for value in case.required_values:
        wanted = normalise_answer(value)
        sources = [
            i
            for i in ok_indices
            if calls[i].result_content
            and f" {wanted} " in f" {normalise_answer(calls[i].result_content or '')} "
        ]
        in_answer = bool(wanted) and any(f" {wanted} " in t for t in told_norm)
        values.append({"value": value, "returned_by": sources, "in_answer": in_answer})
        if in_answer:
            continue
        if sources:
            issues.append(
                _issue(
                    PathStatus.UNUSED_RESULT,
                    f"{value!r} was returned by {calls[sources[0]].name} (call {sources[0]}) "
                    "but the answer does not carry it",
                    value=value,
                    call_index=sources[0],
                )
            )
        else:
            issues.append(
                _issue(
                    PathStatus.MISSING_VALUE,
                    f"required value {value!r} is not stated in the answer "
                    "(and no successful tool call returned it)",
                    value=value,
                )
            )
    if values:
        details["required_values"] = values

    found = {PathStatus(i["status"]) for i in issues}
    if found & COMMAND_STATUSES and found & CITATION_STATUSES:
        issues.insert(
            0,
            _issue(
                PathStatus.BOTH_FAILED,
                "command issue(s) "
                + ", ".join(sorted(s.value for s in found & COMMAND_STATUSES))
                + " and citation issue(s) "
                + ", ".join(sorted(s.value for s in found & CITATION_STATUSES)),
            ),
        )
        found.add(PathStatus.BOTH_FAILED)
    if not case.require_path:
        found = {PathStatus.NOT_REQUIRED}
        details["unchecked_issues"] = issues
        issues = []
    status = next((s for s in STATUS_PRECEDENCE if s in found), PathStatus.PASS)
    return CaseVerdict(
        case_id=case.case_id,
        trace_id=trace.trace_id,
        status=status,
        issues=tuple(issues),
        text_em=em,
        text_f1=f1,
        text_correct=correct,
        cited=cited,
        cited_read=cited_read,
        required_reads=case.required_reads,
        required_cited=required_cited,
        read=_unique(read),
        call_errors=tuple(call_errors),
        details=details,
    )
