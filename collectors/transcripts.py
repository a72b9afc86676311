"""Chat transcripts with OpenAI-style ``tool_calls`` into the trace model τ.

A transcript is a list of messages (``system`` / ``user`` / ``assistant`` with optional
``tool_calls`` / ``tool`` results with ``tool_call_id``), e.g. the tau-bench trajectories.
Each becomes one :class:`Trace`:

* a ``REQUEST`` step; query = the first user message; case id = ``task_id`` (with
  ``:<trial>`` when the row has a trial);
* one ``LLM`` step per assistant turn (input = every message before it, output = its text,
  tool calls requested);
* one ``TOOL`` step per requested tool call, matched by call id to the ``tool`` messages
  that directly follow the turn (real transcripts reuse call ids): arguments decoded
  from JSON, result content, status ``error`` when the result text starts with ``Error``
  (the tau-bench environment's convention), else ``ok``;
* answer = the last assistant message with text.

Transcripts carry no timestamps (steps get time 0 and a ``no_timing`` finding), no
confidence and no evidence: those are findings, never invented values.

Usage::

    from groundtrace.collectors.transcripts import read_transcripts

    for trace in read_transcripts(["gpt-4o-airline_dev_40.jsonl"]):
        print(trace.request.case_id, len(trace.tool_calls), trace.answer)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from groundtrace.sdk import semconv as sc

from .errors import TraceReadError
from .model import Finding, FindingKind, LLMCall, Message, Request, Step, ToolCall, Trace
from .normalize import Convention, message_from_obj
from .readers import ReadReport, iter_input_files

__all__ = ["ERROR_PREFIX", "read_transcripts", "transcript_to_trace"]

#: A tool result starting with this text is an error result (tau-bench convention).
ERROR_PREFIX: Final = "Error"
_CONVENTION: Final = Convention.TRANSCRIPT.value


def _span_id(trace_id: str, index: int) -> str:
    return hashlib.sha256(f"{trace_id}/{index}".encode()).hexdigest()[:16]


def _step(
    trace_id: str,
    index: int,
    parent: str | None,
    action: str,
    name: str,
    attributes: dict[str, Any] | None = None,
    status: str = "UNSET",
) -> Step:
    return Step(
        span_id=_span_id(trace_id, index),
        parent_span_id=parent,
        action=action,
        name=name,
        start_ns=0,
        end_ns=0,
        status=status,
        convention=_CONVENTION,
        attributes=attributes or {},
    )


def _following_tool_messages(messages: list[Message], index: int) -> Iterator[Message]:
    for message in messages[index + 1 :]:
        if message.role != "tool":
            return
        yield message


def transcript_to_trace(
    messages: Sequence[Mapping[str, Any]],
    *,
    case_id: str | None = None,
    source: str = "<transcript>",
    app_name: str | None = None,
    attributes: Mapping[str, Any] | None = None,
) -> Trace:
    """Convert one transcript (a list of OpenAI-style messages) into τ.

    Args:
        messages: the conversation, in order.
        case_id: joins the trace to a dataset case.
        source: a name for where the transcript came from (part of the trace id).
        app_name: application name, if known.
        attributes: extra scalar facts to keep on the REQUEST step (e.g. a reward).

    Raises:
        TraceReadError: ``messages`` is not a list of message objects.
    """
    if not isinstance(messages, list | tuple):
        raise TraceReadError("a transcript must be a list of messages", path=source)
    trace_id = hashlib.sha256(f"{source}\x00{case_id}".encode()).hexdigest()[:32]
    findings: list[Finding] = []
    parsed: list[Message] = []
    for i, raw in enumerate(messages):
        message = message_from_obj(raw)
        if message is None:
            raise TraceReadError(f"message {i} is not an object", path=source, field=f"[{i}]")
        parsed.append(message)
    root = _step(trace_id, 0, None, sc.Action.REQUEST.value, "transcript", dict(attributes or {}))
    steps = [root]
    llm_calls: list[LLMCall] = []
    tool_calls: list[ToolCall] = []
    for i, message in enumerate(parsed):
        if message.role != "assistant":
            continue
        llm_step = _step(trace_id, len(steps), root.span_id, sc.Action.LLM.value, f"turn {i}")
        steps.append(llm_step)
        llm_calls.append(
            LLMCall(
                span_id=llm_step.span_id,
                messages=tuple(parsed[:i]),
                output_messages=(message,),
                output_text=message.content,
                tool_calls=message.tool_calls,
                convention=_CONVENTION,
            )
        )
        # results are the tool messages right after this turn, matched by call id (ids are
        # not unique across a whole conversation: real transcripts reuse them)
        pool = list(_following_tool_messages(parsed, i))
        for j, call in enumerate(message.tool_calls):
            where = f"[{i}].tool_calls[{j}].function.arguments"
            arguments: Any = None
            if call.arguments is not None:
                try:
                    arguments = json.loads(call.arguments)
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    findings.append(
                        Finding(
                            FindingKind.BAD_ATTRIBUTE_TYPE,
                            f"tool call {call.id} arguments are not a JSON object",
                            None,
                            source,
                            where,
                        )
                    )
                    arguments = None
            result = next((m for m in pool if m.tool_call_id == call.id), None)
            if result is not None:
                pool.remove(result)
            status: str | None = None
            if result is None:
                findings.append(
                    Finding(
                        FindingKind.NO_TOOL_RESULT,
                        f"tool call {call.id} ({call.name}) has no tool result message",
                        None,
                        source,
                        f"[{i}].tool_calls[{j}]",
                    )
                )
            else:
                failed = (result.content or "").startswith(ERROR_PREFIX)
                status = sc.ToolStatus.ERROR.value if failed else sc.ToolStatus.OK.value
            tool_step = _step(
                trace_id,
                len(steps),
                llm_step.span_id,
                sc.Action.TOOL.value,
                call.name or "tool",
                status="ERROR" if status == sc.ToolStatus.ERROR.value else "UNSET",
            )
            steps.append(tool_step)
            content = None if result is None else result.content
            tool_calls.append(
                ToolCall(
                    span_id=tool_step.span_id,
                    name=call.name,
                    call_id=call.id,
                    arguments=arguments,
                    arguments_raw=call.arguments,
                    status=status,
                    result_content=content,
                    result_size=None if content is None else len(content),
                )
            )
    query = next((m.content for m in parsed if m.role == "user" and m.content), None)
    answer = next(
        (m.content for m in reversed(parsed) if m.role == "assistant" and m.content), None
    )
    findings.append(Finding(FindingKind.NO_TIMING, "transcripts carry no timestamps"))
    if query is None:
        findings.append(Finding(FindingKind.NO_QUERY, "the transcript has no user message"))
    if answer is None:
        findings.append(Finding(FindingKind.NO_ANSWER, "no assistant message has text"))
    findings.append(Finding(FindingKind.NO_CONFIDENCE, "transcripts carry no confidence"))
    findings.append(Finding(FindingKind.NO_RETRIEVAL, "transcripts carry no retrieved evidence"))
    return Trace(
        request=Request(trace_id=trace_id, query=query, case_id=case_id, app_name=app_name),
        steps=tuple(steps),
        answer=answer,
        tool_calls=tuple(tool_calls),
        llm_calls=tuple(llm_calls),
        conventions=(_CONVENTION,),
        findings=tuple(findings),
    )


def _row_to_trace(row: Any, source: str) -> Trace:
    if isinstance(row, list):
        return transcript_to_trace(row, source=source)
    if not isinstance(row, dict):
        raise TraceReadError("expected a transcript object or message list", path=source)
    messages = row.get("traj", row.get("messages"))
    if messages is None:
        raise TraceReadError("row has neither 'traj' nor 'messages'", path=source)
    task_id, trial = row.get("task_id"), row.get("trial")
    case_id = None if task_id is None else str(task_id)
    if case_id is not None and trial is not None:
        case_id = f"{case_id}:{trial}"
    extra = {k: row[k] for k in ("reward", "trial") if isinstance(row.get(k), int | float | str)}
    return transcript_to_trace(messages, case_id=case_id, source=source, attributes=extra)


def read_transcripts(
    paths: Iterable[str | os.PathLike[str]], *, report: ReadReport | None = None
) -> Iterator[Trace]:
    """Read transcripts from JSON-lines files (one transcript per line) or JSON arrays.

    A line is either a row with ``traj`` or ``messages`` (plus optional ``task_id``,
    ``trial``, ``reward``) or a bare list of messages. A file whose first character is
    ``[`` is read whole as a JSON array of such rows.

    Raises:
        TraceReadError: without ``report``, on the first bad line.
    """
    for name in iter_input_files(paths):
        if report is not None:
            report.files.append(name)
        try:
            with open(name, encoding="utf-8") as handle:
                head = handle.read(1)
                handle.seek(0)
                if head == "[":
                    rows: Iterable[tuple[int, str]] = enumerate(
                        (json.dumps(r) for r in json.load(handle)), start=1
                    )
                else:
                    rows = enumerate(handle, start=1)
                for line_no, line in rows:
                    if not line.strip():
                        continue
                    try:
                        trace = _row_to_trace(json.loads(line), f"{name}:{line_no}")
                    except ValueError as exc:
                        error = TraceReadError(f"invalid JSON: {exc}", path=name, line=line_no)
                    except TraceReadError as exc:
                        error = TraceReadError(exc.reason, path=name, line=line_no, field=exc.field)
                    else:
                        if report is not None:
                            report.records += 1
                        yield trace
                        continue
                    if report is None:
                        raise error
                    report.errors.append(error)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            error = TraceReadError(f"cannot read transcript file: {exc}", path=name)
            if report is None:
                raise error from None
            report.errors.append(error)
