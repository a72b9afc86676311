"""The tests' way to validate traces in code: :func:`validate_traces_async`, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.paths import PathReport, ToolsConfig, validate_traces_async
from groundtrace.collectors.model import Trace


def validate(
    traces: Iterable[Trace], cases: Sequence[Case], tools: ToolsConfig | None = None, **kw: Any
) -> PathReport:
    """:func:`validate_traces_async` on ``traces``, in an event loop of its own."""
    return asyncio.run(validate_traces_async(traces, cases, tools, **kw))
