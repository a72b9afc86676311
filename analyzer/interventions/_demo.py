"""The interventions' demo hook: the CUE-R operators on the demo app's traces, replayed by
function through the app's recorded entry point (its model still serves)."""

from __future__ import annotations

from typing import Final

from groundtrace.analyzer._analysis import DemoInputs

from ._config import Config

__all__ = ["CUE_R_OPERATORS", "demo_config"]

#: The demo's operators: the CUE-R set (REMOVE, REPLACE and DUPLICATE the target).
CUE_R_OPERATORS: Final = ("REMOVE", "REPLACE", "DUPLICATE")


def demo_config(inputs: DemoInputs) -> Config:
    """The CUE-R operators on every demo trace, joined to the demo's cases.

    The original of each item is the app's recorded answer (it is not asked again); the
    replacement candidates come from the question set the app ran on; one replay at a time
    (a local model server has one slot, and a trace's replays run back to back so that
    consecutive prompts share their prefix). The run folder is ``inputs.out``.
    """
    return Config(
        out=str(inputs.out),
        traces=(str(inputs.traces),),
        cases=str(inputs.cases),
        pool_dataset=None if inputs.dataset is None else str(inputs.dataset),
        operators=CUE_R_OPERATORS,
        concurrency=1,
    )
