"""Replay of captured requests on perturbed evidence (SPEC 4.1).

Two ways, both producing counterfactual traces τ̃ linked to their original:

* :class:`FunctionReplayer` imports the app's replayable ANSWER entry point and calls it;
* :class:`EndpointReplayer` re-sends the captured LLM call with the evidence block edited,
  through the shared model client (cache, bounded concurrency, retries).

The run folder's :class:`~groundtrace.analyzer.executor.UnitJournal` records every unit's
:class:`UnitResult`, so a killed run resumes with zero repeated units (and
:func:`journaled_trace_ids` names the counterfactual traces to keep); the model-call cache
makes repeated calls impossible as well.

Usage (inside an async function, a notebook cell or a service: the library starts no event
loop of its own; the interventions analysis replays its units through the driver)::

    from groundtrace.analyzer.replay import (
        CounterfactualRecorder, FunctionReplayer, ReplayChunk, ReplayUnit,
    )

    with CounterfactualRecorder("runs/x/counterfactual_traces") as recorder:
        replayer = FunctionReplayer(recorder)
        unit = ReplayUnit(trace.trace_id, "case-1", trace.request.query, "ZERO", None, None, 0)
        result = await replayer.run(unit, trace)   # UnitResult, never raises per unit
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._capture import CounterfactualRecorder
from ._endpoint import EndpointReplayer, unit_request
from ._function import FunctionReplayer
from ._prune import journaled_trace_ids, keep_traces
from ._types import ReplayChunk, ReplayUnit, UnitResult

__all__ = [
    "CounterfactualRecorder",
    "EndpointReplayer",
    "FunctionReplayer",
    "ReplayChunk",
    "ReplayUnit",
    "UnitResult",
    "journaled_trace_ids",
    "keep_traces",
    "unit_request",
]

#: The type of :attr:`UnitResult.status`, no longer public (0.2.0): importable from here for
#: one release, with a warning.
__getattr__ = renamed(
    __name__,
    {"UnitStatus": f"{__name__}._types.UnitStatus"},
    since="0.2.0",
    remove_in="0.3.0",
)
