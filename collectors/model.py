"""The trace model τ: one user request rebuilt from its spans, plus what is missing.

Every source (OTLP files, the receiver, Phoenix, chat transcripts) ends up as a
:class:`Trace`. The model is made of frozen ``msgspec.Struct`` classes holding JSON values,
so a trace round-trips through :meth:`Trace.to_json` / :meth:`Trace.from_json`, which are
msgspec's encoder and strict decoder. Structs rather than
dataclasses or pydantic: the model is built on the hot path of the readers (tens of thousands
of traces per second) and msgspec builds, encodes and decodes structs without Python code per
field; validation happens once, in the normalisers (reading τ JSON back checks every field's
type).

Nothing is guessed: what a trace does not say is ``None`` (or empty) and is reported in
:attr:`Trace.findings` (see :class:`FindingKind`).

Usage::

    from groundtrace.collectors import read_traces

    for trace in read_traces(["traces.jsonl"]):
        print(trace.request.query, trace.answer, trace.confidence, len(trace.evidence))
"""

from __future__ import annotations

from ._model_types import (
    MODEL_VERSION,
    Evaluation,
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
    "Evaluation",
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


def dumps(trace: Trace) -> str:
    """:meth:`Trace.to_json`."""
    return trace.to_json()


def loads(text: str | bytes) -> Trace:
    """:meth:`Trace.from_json`."""
    return Trace.from_json(text)
