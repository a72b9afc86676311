"""Which arguments of which tool are paths/resources read (``--tools-config FILE``).

TOML or JSON, one table per tool::

    [tools.read_document]
    reads = ["path"]          # arguments whose values are resources read

    [tools.search]
    reads = []                # runs, but reads no resource

With a tool declared here, what it read is exactly the values of those arguments (on a
successful call); a tool not declared falls back to the ``paths_read`` its TOOL span
recorded. Paths compare after :func:`normalise_resource` (``os.path.normpath`` for values
that look like paths, i.e. contain ``/``).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.analyzer.cases import normalise_resource
from groundtrace.analyzer.errors import ConfigError

__all__ = ["ToolsConfig", "load_tools_config"]


@dataclass(frozen=True, slots=True)
class ToolsConfig:
    """Per-tool declaration of the arguments that are resources read.

    Attributes:
        reads: tool name -> argument names holding paths/resources read.
        source: the file it was loaded from, if any.
    """

    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source: str | None = None

    def declares(self, tool: str | None) -> bool:
        """Whether ``tool`` is declared (so its reads come from its arguments)."""
        return tool is not None and tool in self.reads

    def resources(self, tool: str | None, arguments: Mapping[str, Any] | None) -> list[str]:
        """The resources a call of ``tool`` with ``arguments`` read, per this config."""
        if tool is None or arguments is None:
            return []
        out: list[str] = []
        for name in self.reads.get(tool, ()):
            value = arguments.get(name)
            values = value if isinstance(value, list | tuple) else [value]
            out.extend(normalise_resource(str(v)) for v in values if v is not None and v != "")
        return out


def load_tools_config(path: str | os.PathLike[str]) -> ToolsConfig:
    """Load a tools config from TOML (``.toml``) or JSON (anything else).

    Raises:
        ConfigError: unreadable file, bad syntax, or a wrong layout (naming the field).
    """
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read tools config: {exc.strerror}", path=name) from None
    try:
        if name.endswith(".toml"):
            data: Any = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"invalid tools config: {exc}", path=name) from None
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, dict):
        raise ConfigError(
            "expected a 'tools' table of tool name -> {reads = [...]}", path=name, field="tools"
        )
    reads: dict[str, tuple[str, ...]] = {}
    for tool, spec in tools.items():
        where = f"tools.{tool}.reads"
        args = spec.get("reads") if isinstance(spec, dict) else None
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError("must be a list of argument names", path=name, field=where)
        reads[str(tool)] = tuple(args)
    return ToolsConfig(reads=reads, source=name)
