"""Auto-instrumentation: one instrumentor per patched library, and the helpers to write one.

Each instrumentor follows the OpenTelemetry ``BaseInstrumentor`` contract: ``instrument()``
and ``uninstrument()`` are idempotent and ``uninstrument()`` restores the original functions
exactly. They are also registered as ``opentelemetry_instrumentor`` entry points, so
``opentelemetry-instrument`` picks them up.

Usage::

    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
    from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor

    OpenAIInstrumentor().instrument()  # or instrument(tracer_provider=provider)
    RankBM25Instrumentor().instrument()

The library modules themselves are imported only when ``instrument()`` runs.

This package is also the one place an instrumentor takes groundtrace's plumbing from (the
shipped ones import nothing else of the SDK but :mod:`groundtrace.sdk.semconv`; a test holds
them to it). docs/CONTRIBUTING.md ("Add an instrumentor") walks through writing one.

* Patching: :class:`Layers` (wrapt layers put in innermost and spliced out exactly) and
  :data:`Wrapper` (the wrapt wrapper signature).
* When and where: :func:`tracer_source` (the tracer, fixed by ``tracer_provider=`` or looked
  up per call) and :func:`active_settings` (the :class:`Settings` in force, or ``None`` when
  tracing is disabled or suppressed: then call straight through).
* Recording: :class:`Recorder` (a span's attributes gathered in a dict, every captured text
  masked and clipped, written at the end with ``rec.final()``), :data:`AttributeValue`,
  :class:`Content` with ``Settings.captures``, :func:`record_failure` (an exception as the
  decorators record it), :func:`record_evidence` and :func:`normalize_item` (returned
  documents as RETRIEVE / RERANK evidence), :class:`EvidenceItem`, :func:`safe_json` and
  :func:`safe_str` (text of any value, never raising).
* Failing open: :data:`logger`, the SDK's logger; telemetry errors go there at debug level.

The helpers are imported on first use, so importing an instrumentor stays as cheap as before.
"""

from __future__ import annotations

import typing as _typing

from groundtrace.sdk._lazy import lazy_names as _lazy_names

if _typing.TYPE_CHECKING:
    from groundtrace.sdk._attributes import safe_json, safe_str
    from groundtrace.sdk._evidence import EvidenceItem, normalize_item
    from groundtrace.sdk._evidence_attributes import record_evidence
    from groundtrace.sdk._record import AttributeValue, Recorder
    from groundtrace.sdk._runtime import logger
    from groundtrace.sdk._settings import Content, Settings
    from groundtrace.sdk.instrumentation._base import (
        INSTRUMENTATION_NAME,
        Layers,
        Wrapper,
        active_settings,
        record_failure,
        tracer_source,
    )

# Each helper and the module it comes from (PEP 562: loaded on first use).
_SURFACE: dict[str, tuple[str, ...]] = {
    "groundtrace.sdk._attributes": ("safe_json", "safe_str"),
    "groundtrace.sdk._evidence": ("EvidenceItem", "normalize_item"),
    "groundtrace.sdk._evidence_attributes": ("record_evidence",),
    "groundtrace.sdk._record": ("AttributeValue", "Recorder"),
    "groundtrace.sdk._runtime": ("logger",),
    "groundtrace.sdk._settings": ("Content", "Settings"),
    "groundtrace.sdk.instrumentation._base": (
        "INSTRUMENTATION_NAME",
        "Layers",
        "Wrapper",
        "active_settings",
        "record_failure",
        "tracer_source",
    ),
}
__all__ = [
    "INSTRUMENTATION_NAME",
    "AttributeValue",
    "Content",
    "EvidenceItem",
    "Layers",
    "Recorder",
    "Settings",
    "Wrapper",
    "active_settings",
    "logger",
    "normalize_item",
    "record_evidence",
    "record_failure",
    "safe_json",
    "safe_str",
    "tracer_source",
]

__getattr__, __dir__ = _lazy_names(__name__, _SURFACE, globals(), __all__)
