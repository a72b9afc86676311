"""Replay of captured requests on perturbed evidence (SPEC 4.1).

Two ways, both producing counterfactual traces τ̃ linked to their original:

* :class:`FunctionReplayer` imports the app's replayable ANSWER entry point and calls it;
* :class:`EndpointReplayer` re-sends the captured LLM call with the evidence block edited,
  through the shared model client (cache, bounded concurrency, retries).

The run folder's :class:`~groundtrace.analyzer.executor.UnitJournal` records every unit's
:class:`UnitResult`, so a killed run resumes with zero repeated units (and
:func:`journaled_trace_ids` names the counterfactual traces to keep); the model-call cache
makes repeated calls impossible as well.

Usage::

    import asyncio

    from groundtrace.analyzer.replay import (
        CounterfactualRecorder, FunctionReplayer, ReplayChunk, ReplayUnit,
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
from ._prune import journaled_trace_ids, keep_traces
from ._types import ReplayChunk, ReplayUnit, UnitResult, UnitStatus

__all__ = [
    "CounterfactualRecorder",
    "EndpointReplayer",
    "FunctionReplayer",
    "ReplayChunk",
    "ReplayUnit",
    "UnitResult",
    "UnitStatus",
    "journaled_trace_ids",
    "keep_traces",
    "unit_request",
]
