"""Normalisation: spans of any supported convention into the trace model τ.

Spans are grouped by trace id (:func:`build_traces`, streaming), checked for structure
(duplicates, roots, orphans, clock skew) and interpreted convention by convention:
groundtrace's own keys, OpenInference, OTel GenAI and OpenLLMetry/Traceloop. What a trace
does not say becomes a finding, never a guess.

Usage::

    from groundtrace.collectors.normalize import build_traces

    for trace in build_traces(span_records):
        print(trace.trace_id, [f.kind for f in trace.findings])
"""

from __future__ import annotations

from ._build import build_trace
from ._convention import Convention, detect_convention
from ._messages import message_from_obj
from ._stream import DEFAULT_MAX_PENDING_SPANS, DEFAULT_WINDOW, build_traces

__all__ = [
    "DEFAULT_MAX_PENDING_SPANS",
    "DEFAULT_WINDOW",
    "Convention",
    "build_trace",
    "build_traces",
    "detect_convention",
    "message_from_obj",
]
