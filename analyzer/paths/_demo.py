"""The command paths' demo hook: the demo's tool-using agent, validated against its cases."""

from __future__ import annotations

from groundtrace.analyzer._analysis import DemoInputs
from groundtrace.analyzer.errors import ConfigError

from ._config import Config

__all__ = ["demo_config"]


def demo_config(inputs: DemoInputs) -> Config:
    """The agent's traces (``inputs.agent``: ``traces/``) against its path cases
    (``cases.jsonl``) with its tools config (``tools.toml``).

    Raises:
        ConfigError: the demo ran no agent.
    """
    if inputs.agent is None:
        raise ConfigError("the demo ran no agent whose command paths to validate")
    return Config(
        traces=(str(inputs.agent / "traces"),),
        cases=str(inputs.agent / "cases.jsonl"),
        tools_config=str(inputs.agent / "tools.toml"),
    )
