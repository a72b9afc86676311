"""From a recorded trace to what is attributed: the ANSWER call's prompt, the evidence items
found in it, and the recorded answer.

Works on any trace the collectors read where the prompt and the evidence text were captured
(groundtrace's SDK, OpenInference, GenAI conventions): the sources are the retrieved items
whose text occurs in the prompt of the model call that produced the answer, in prompt order.
When that call's output holds the answer after some text (an app that replies in JSON), that
text is the reply prefix, read but not scored, unless it names an evidence id (a reply that
cites before it answers: the answer is then scored right after the prompt, so the cited ids
never condition it); nothing after the answer is scored.
"""

from __future__ import annotations

from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors import Trace
from groundtrace.collectors.model import LLMCall, Message

from ._context import AblationContext

__all__ = ["trace_context"]


def _answer_call(trace: Trace, answer: str) -> LLMCall | None:
    calls = [c for c in trace.llm_calls if c.messages]
    producing = [c for c in calls if answer in (c.output_text or "")]
    chosen = producing or calls
    return chosen[-1] if chosen else None


def _message(where: str, index: int, recorded: Message) -> dict[str, Any]:
    """One recorded message as the chat template reads it: its text, and an assistant's tool
    calls (a tool-call message has no text; one with neither was not captured)."""
    if recorded.content is None and not recorded.tool_calls:
        raise InputError(
            f"{where}: message {index} of the answer call has no captured text",
            field="llm_calls.messages",
        )
    message: dict[str, Any] = {"role": recorded.role or "user", "content": recorded.content or ""}
    if recorded.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in recorded.tool_calls
        ]
    if recorded.tool_call_id is not None:
        message["tool_call_id"] = recorded.tool_call_id
    return message


def trace_context(trace: Trace) -> AblationContext:
    """The attribution context of one trace.

    Raises:
        InputError: the trace has no answer, no model call with its prompt, a prompt message
            with neither text nor tool calls, no retrieved evidence, or no evidence item
            whose text is in the prompt (the message names the trace and what is missing).
    """
    where = f"trace {trace.request.trace_id}"
    answer = (trace.answer or "").strip()
    if not answer:
        raise InputError(f"{where} has no answer to attribute (was content capture on?)",
                         field="answer")  # fmt: skip
    call = _answer_call(trace, answer)
    if call is None:
        raise InputError(f"{where} records no model call with its prompt", field="llm_calls")
    messages = [_message(where, i, recorded) for i, recorded in enumerate(call.messages)]
    if not trace.evidence:
        raise InputError(f"{where} records no retrieved evidence (no retrieval step)",
                         field="evidence")  # fmt: skip
    found: list[tuple[int, int, str, str]] = []
    seen: set[tuple[str | None, str]] = set()
    for item in trace.evidence:
        text = (item.content or "").strip()
        key = (item.id, text)  # one item retrieved twice is one source; two chunks of an id two
        if not text or key in seen:
            continue
        for m, message in enumerate(messages):
            pos = message["content"].find(text)
            if pos >= 0:
                found.append((m, pos, item.id or f"#{len(found)}", text))
                seen.add(key)
                break
    found.sort()
    sources: list[tuple[str, str]] = []
    last = (-1, -1)
    for m, pos, item_id, text in found:
        if (m, pos) < last:
            continue  # overlaps the previous source
        sources.append((item_id, text))
        last = (m, pos + len(text))
    if not sources:
        raise InputError(
            f"{where}: no evidence item's text is in the answer call's prompt "
            "(was content capture on?)",
            field="evidence",
        )
    output = call.output_text or ""
    at = output.find(answer)
    prefix = output[:at] if at > 0 else ""
    ids = {i for i in (*trace.cited_ids, *(e.id for e in trace.evidence)) if i}
    if any(i in prefix for i in ids):
        prefix = ""  # the reply cites before it answers: never condition on the cited ids
    return AblationContext.locate(messages, sources, answer, prefix=prefix)
