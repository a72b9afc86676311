"""Collectors: bring traces in and normalise them into the trace model τ.

Readers stream spans from OTLP-JSON lines, OTLP protobuf, gzip, directories and stdin;
the normalisers group spans into traces and interpret groundtrace, OpenInference, OTel GenAI
and OpenLLMetry/Traceloop conventions; chat transcripts convert directly. Whatever a trace
does not say is reported in :attr:`Trace.findings` instead of being guessed.

Usage::

    from groundtrace.collectors import ReadReport, read_traces

    report = ReadReport()
    for trace in read_traces(["runs/demo/traces"], report=report):
        print(trace.request.query, trace.answer, trace.confidence)
    for error in report.errors:
        print(error)
"""

from __future__ import annotations

from .errors import GroundtraceError, InputError, TraceReadError
from .model import (
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
from .normalize import Convention, build_trace, build_traces, detect_convention
from .readers import ReadReport, read_spans, read_traces
from .spans import LogRecord, SourceLocation, SpanEvent, SpanRecord, SpanStatus

__all__ = [
    "MODEL_VERSION",
    "Convention",
    "Evaluation",
    "Evidence",
    "Finding",
    "FindingKind",
    "GroundtraceError",
    "InputError",
    "LLMCall",
    "LogRecord",
    "Message",
    "PromptEvidence",
    "ReadReport",
    "ReplayEntrypoint",
    "ReplayLink",
    "Request",
    "RequestedToolCall",
    "SourceLocation",
    "SpanEvent",
    "SpanRecord",
    "SpanStatus",
    "Step",
    "ToolCall",
    "Trace",
    "TraceReadError",
    "Usage",
    "build_trace",
    "build_traces",
    "detect_convention",
    "read_spans",
    "read_traces",
]
