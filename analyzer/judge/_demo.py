"""The judge's demo hook: the lexical judge on the demo app's traces."""

from __future__ import annotations

from groundtrace.analyzer._analysis import DemoInputs

from ._config import Config

__all__ = ["demo_config"]


def demo_config(inputs: DemoInputs) -> Config:
    """What ``groundtrace judge run --judge lexical --out OUT TRACES`` runs on the demo's
    traces: the offline lexical judge (no model call), no gold set."""
    return Config(judge="lexical", traces=(str(inputs.traces),))
