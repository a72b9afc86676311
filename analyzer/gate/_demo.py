"""The gate's demo hook: the demo app's second version (the candidate) against its first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.analyzer._analysis import DemoInputs
from groundtrace.analyzer.errors import ConfigError

if TYPE_CHECKING:
    from ._shape import Config

__all__ = ["demo_config"]


def demo_config(inputs: DemoInputs) -> Config:
    """The candidate run's traces gated against the app run's on the demo's cases, with the
    ``balanced_default`` profile.

    Raises:
        ConfigError: the demo ran no candidate version of its app.
    """
    if inputs.candidate is None:
        raise ConfigError("the demo ran no candidate version of its app to gate")
    from ._shape import Config  # the module that names this hook in its ANALYSIS

    return Config(
        baseline=(str(inputs.traces),),
        candidate=(str(inputs.candidate),),
        cases=str(inputs.cases),
        profile="balanced_default",
    )
