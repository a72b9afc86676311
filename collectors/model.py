"""The trace model τ: one user request rebuilt from its spans, plus what is missing.

Every source (OTLP files, the receiver, Phoenix, chat transcripts) ends up as a
:class:`Trace`. The model is made of frozen, slotted dataclasses holding only JSON-compatible
values, so a trace round-trips exactly through :meth:`Trace.to_json` / :meth:`Trace.from_json`.
Dataclasses rather than pydantic: the model is built on the hot path of the readers (tens of
thousands of traces per second), validation happens once in the normalisers, and the stdlib
keeps ``collectors`` free of a heavy dependency.

Nothing is guessed: what a trace does not say is ``None`` (or empty) and is reported in
:attr:`Trace.findings` (see :class:`FindingKind`).

Usage::

    from groundtrace.collectors import read_traces

    for trace in read_traces(["traces.jsonl"]):
        print(trace.request.query, trace.answer, trace.confidence, len(trace.evidence))
"""

from __future__ import annotations

from ._model_codec import dumps, loads
from ._model_types import (
    MODEL_VERSION,
    Evidence,
    Finding,
    FindingKind,
    LLMCall,
    Message,
    PromptEvidence,
    ReplayEntrypoint,
    ReplayLink,
    Request,
    RequestedToolCall,
    Step,
    ToolCall,
    Trace,
    Usage,
)

__all__ = [
    "MODEL_VERSION",
    "Evidence",
    "Finding",
    "FindingKind",
    "LLMCall",
    "Message",
    "PromptEvidence",
    "ReplayEntrypoint",
    "ReplayLink",
    "Request",
    "RequestedToolCall",
    "Step",
    "ToolCall",
    "Trace",
    "Usage",
    "dumps",
    "loads",
]
