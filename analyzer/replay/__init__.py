"""Replay of captured requests on perturbed evidence (SPEC 4.1).

Two ways, both producing counterfactual traces τ̃ linked to their original:

* :class:`FunctionReplayer` imports the app's replayable ANSWER entry point and calls it;
* :class:`EndpointReplayer` re-sends the captured LLM call with the evidence block edited,
  through the shared model client (cache, bounded concurrency, retries).

A :class:`Journal` (sqlite in the run folder) records every unit, so a killed run resumes
with zero repeated units; the model-call cache makes repeated calls impossible as well.

Usage::

    import asyncio

    from groundtrace.analyzer.replay import (
        CounterfactualRecorder, FunctionReplayer, Journal, ReplayChunk, ReplayUnit,
    )

    with CounterfactualRecorder("runs/x/counterfactual_traces") as recorder:
        replayer = FunctionReplayer(recorder)
        unit = ReplayUnit(trace.trace_id, "case-1", trace.request.query, "ZERO", None, None, 0)
        result = asyncio.run(replayer.run(unit, trace))   # UnitResult, never raises per unit
"""

from __future__ import annotations

from ._capture import CounterfactualRecorder
from ._endpoint import EndpointReplayer, unit_request
from ._function import FunctionReplayer
from ._journal import Journal
from ._prune import keep_traces
from ._types import ReplayChunk, ReplayUnit, UnitResult, UnitStatus

__all__ = [
    "CounterfactualRecorder",
    "EndpointReplayer",
    "FunctionReplayer",
    "Journal",
    "ReplayChunk",
    "ReplayUnit",
    "UnitResult",
    "UnitStatus",
    "keep_traces",
    "unit_request",
]
