"""Auto-instrumentation: one instrumentor per patched library.

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
"""

from __future__ import annotations

__all__: list[str] = []
