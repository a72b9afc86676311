"""Endpoint replay: re-send the captured LLM call with the evidence block edited.

The app rendered its evidence with the SDK's standard rendering, so the exact block is on the
trace (``prompt_evidence``) and inside the captured request (``request_json``). Replay finds
the captured call whose messages contain the block exactly once, swaps it for the perturbed
evidence rendered by :func:`groundtrace.sdk.render_evidence`
(:func:`groundtrace.sdk.replace_evidence_block`), re-sends it through the shared model client
(content-addressed cache, bounded concurrency, retries on 429/5xx/timeouts) with temperature 0
and the unit's seed, and parses the reply with :func:`groundtrace.sdk.parse_answer`.

Request parameters are kept as captured except: ``temperature`` (0), ``seed`` (the unit's),
streaming options (dropped: the reply is read whole), and any list inside ``response_format``
equal to the original evidence ids (e.g. a JSON-schema ``enum`` of citable ids), which is
replaced by the perturbed evidence ids so a replacement chunk stays citable.

The counterfactual is recorded as a trace too: a REQUEST root with the replay link and an
ANSWER step holding the parsed answer and the new evidence block.

A trace of another instrumentation (OpenInference, OpenLLMetry, OTel GenAI) has no rendered
block: its retrieved documents are found verbatim in the recorded messages of its LLM call and
re-rendered in the app's own layout (:mod:`._layout`); the request is the one recorded
(OpenInference's invocation parameters and messages) or rebuilt from the recorded model,
messages and parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groundtrace.analyzer._foreign import lacks
from groundtrace.analyzer.llm import CallFailure, ChatRequest, ModelClient
from groundtrace.collectors import LLMCall, Trace
from groundtrace.sdk import Action, parse_answer, render_evidence, replace_evidence_block, step
from groundtrace.sdk.rendering import record_prompt_evidence

from ._capture import CounterfactualRecorder, trace_id_of
from ._layout import document_layout
from ._types import ReplayUnit, UnitResult, UnitStatus, restrict_ids

__all__ = ["EndpointReplayer", "EvidenceSlot", "captured_call", "rebuild_request", "unit_request"]

_DROPPED = frozenset({"model", "messages", "stream", "stream_options", "temperature", "seed", "n"})


@dataclass(frozen=True, slots=True)
class EvidenceSlot:
    """The captured call that shows the evidence, and how to show other evidence in it.

    Attributes:
        call: the captured LLM call.
        request: its request (as sent, or rebuilt from the recorded messages).
        block: the exact evidence text inside the request's messages.
        ids: the evidence ids the block shows, in order.
        render: the block for other evidence items (the SDK rendering, or the app's layout).
    """

    call: LLMCall
    request: dict[str, Any]
    block: str
    ids: tuple[str, ...]
    render: Callable[[list[dict[str, Any]]], str]


def _request_of(call: LLMCall) -> dict[str, Any] | None:
    """The call's request as sent (groundtrace, OpenInference), else rebuilt from the
    recorded model, messages and parameters (OTel GenAI, OpenLLMetry)."""
    if call.request_json is not None:
        try:
            request = json.loads(call.request_json)
        except ValueError:
            return None
        return request if isinstance(request, dict) else None
    if not call.messages or not call.model:
        return None
    messages: list[dict[str, Any]] = []
    for m in call.messages:
        if m.role is None or m.content is None:
            return None  # a tool exchange cannot be rebuilt from its recorded parts
        message: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.name:
            message["name"] = m.name
        messages.append(message)
    params = {k: v for k, v in call.params.items() if k != "tools"}
    return {"model": call.model, "messages": messages, **params}


def _sdk_slot(trace: Trace) -> EvidenceSlot | str:
    for prompt in trace.prompt_evidence:
        for call in trace.llm_calls:
            request = _request_of(call) if call.request_json is not None else None
            if request is None:
                continue
            try:
                replace_evidence_block(request.get("messages") or [], prompt.block, "")
            except ValueError:
                continue
            return EvidenceSlot(call, request, prompt.block, prompt.ids, render_evidence)
    return "no captured LLM request contains the recorded evidence block exactly once"


def _layout_slot(trace: Trace) -> EvidenceSlot | str:
    """The slot of a trace without the SDK's rendering: its documents found in the messages
    of its last LLM call that shows them all (:func:`document_layout`)."""
    items = [
        {"id": e.id, "title": e.title or "", "content": e.content}
        for e in {e.id: e for e in trace.evidence if e.id is not None and e.content}.values()
    ]
    if not items:
        return f"{lacks(trace, 'documents')}: interventions need them"
    why = "no LLM call with its request messages recorded on the trace"
    for call in reversed(trace.llm_calls):
        request = _request_of(call)
        if request is None:
            continue
        layout = document_layout(request.get("messages") or [], items)
        if isinstance(layout, str):
            why = layout
            continue
        return EvidenceSlot(call, request, layout.block, layout.ids, layout.render)
    return why


def captured_call(trace: Trace) -> EvidenceSlot | str:
    """The captured call holding the evidence, where, and how to re-render it; or why not.

    A trace with the SDK's rendered evidence block (``prompt_evidence``) uses it; a trace of
    another instrumentation has its retrieved documents found in its recorded messages.
    """
    if not trace.llm_calls:
        return "no LLM call captured on the trace"
    if trace.prompt_evidence:
        return _sdk_slot(trace)
    return _layout_slot(trace)


def _swap_ids(value: Any, old: list[str], new: list[str]) -> Any:
    """Replace lists equal to ``old`` by ``new`` inside a request parameter.

    JSON Schema needs at least one ``enum`` value, and llama.cpp's grammar builder fails on an
    empty one, so with no evidence left (ZERO) an array of citable ids becomes an empty array
    (``maxItems: 0``) and a bare enum is dropped.
    """
    if isinstance(value, list):
        if value and [str(v) for v in value] == old:
            return list(new)
        return [_swap_ids(v, old, new) for v in value]
    if isinstance(value, dict):
        out = {k: _swap_ids(v, old, new) for k, v in value.items()}
        items = value.get("items")
        if not new and isinstance(items, dict) and _swap_ids(items.get("enum"), old, new) == []:
            out["maxItems"] = 0  # the recursion dropped the items' emptied enum
        if out.get("enum") == []:
            del out["enum"]
        return out
    return value


def rebuild_request(
    slot: EvidenceSlot,
    evidence_items: Sequence[dict[str, Any]],
    *,
    model: str | None,
    seed: int,
) -> ChatRequest:
    """The captured request with the evidence block re-rendered from ``evidence_items``.

    Raises:
        ValueError: the block is not found exactly once in the messages.
    """
    request = slot.request
    block = slot.render(list(evidence_items))
    messages = replace_evidence_block(request.get("messages") or [], slot.block, block)
    params = {k: v for k, v in request.items() if k not in _DROPPED}
    max_tokens = params.pop("max_tokens", None)
    response_format = params.pop("response_format", None)
    if response_format is not None and slot.ids:
        new_ids = [str(item["id"]) for item in evidence_items]
        response_format = _swap_ids(response_format, list(slot.ids), new_ids)
    return ChatRequest(
        model=model or str(request.get("model") or ""),
        messages=tuple(messages),
        temperature=0.0,
        seed=seed,
        max_tokens=int(max_tokens) if isinstance(max_tokens, int | float) else None,
        response_format=response_format if isinstance(response_format, dict) else None,
        params=params,
    )


def unit_request(unit: ReplayUnit, trace: Trace, model: str | None) -> ChatRequest | UnitResult:
    """The request that replays ``unit`` of ``trace``, or the unit's failure when none can be
    built (what endpoint replay sends, and what ``--estimate`` counts)."""
    found = captured_call(trace)
    if isinstance(found, str):
        return UnitResult.failure(unit.key, "not_replayable", found)
    items = [c.as_item() for c in unit.evidence]
    try:
        return rebuild_request(found, items, model=model, seed=unit.seed)
    except (ValueError, TypeError, KeyError) as exc:
        return UnitResult.failure(unit.key, "request_rebuild", str(exc))


class EndpointReplayer:
    """Replays units by re-sending the captured LLM call (see the module docstring).

    Args:
        recorder: where counterfactual traces are recorded.
        client: the shared model client (its cache and concurrency bound apply).
        model: model name to send (default: the captured one).
    """

    mode = "endpoint"

    def __init__(
        self, recorder: CounterfactualRecorder, client: ModelClient, *, model: str | None = None
    ) -> None:
        self.recorder = recorder
        self.client = client
        self.model = model

    def check(self, trace: Trace) -> str | None:
        """Why ``trace`` cannot be replayed at the endpoint, or ``None`` when it can."""
        found = captured_call(trace)
        return found if isinstance(found, str) else None

    async def run(self, unit: ReplayUnit, trace: Trace) -> UnitResult:
        """Replay one unit; call failures become recorded failures of the unit."""
        chat = unit_request(unit, trace, self.model)
        if isinstance(chat, UnitResult):
            return chat
        items = [c.as_item() for c in unit.evidence]
        result = await self.client.complete(chat)
        if isinstance(result, CallFailure):
            return UnitResult.failure(unit.key, result.kind.value, result.message, result.attempts)
        text, cached, attempts = result.text, result.cached, result.attempts
        parsed = parse_answer(text)
        cited = restrict_ids(parsed.used_chunks, unit.evidence)
        try:
            cf_trace = self._record(unit, parsed.answer, parsed.confidence, cited, items)
        except Exception as exc:  # recording must not lose the measured answer
            cf_trace = None
            extra = {"record_error": f"{type(exc).__name__}: {exc}"}
        else:
            extra = {}
        return UnitResult(
            key=unit.key,
            status=UnitStatus.OK,
            answer=parsed.answer,
            confidence=parsed.confidence,
            cited_ids=cited,
            parse_error=parsed.error,
            counterfactual_trace_id=cf_trace,
            model_calls=attempts,
            cached=cached,
            extra={"raw": text, **extra},
        )

    def _record(
        self,
        unit: ReplayUnit,
        answer: str,
        confidence: float | None,
        cited: Sequence[str],
        items: Sequence[dict[str, Any]],
    ) -> str | None:
        with self.recorder.scope(unit) as root:
            with step(Action.ANSWER, name="replay_answer", query=unit.query) as s:
                record_prompt_evidence(render_evidence(list(items)), [str(i["id"]) for i in items])
                s.record_answer({"answer": answer, "confidence": confidence, "used_chunks": cited})
            return trace_id_of(root)

    async def aclose(self) -> None:
        """Close the model client's HTTP connections."""
        await self.client.aclose()
