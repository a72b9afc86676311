"""When the path channel applies: a command path needs tool calls or a declared one.

A RAG app that retrieves through its own retriever (no tool span) and answers with citations
has no command path: checking its citations against tool reads would call every citation
invalid. Such a (case, trace) pair is ``not_applicable`` -- said per case and overall,
never counted as a path failure or a masked failure. A case that states its expected path
(:attr:`Case.declares_path`), even an empty one or reads only, is checked: a run that rightly
made no call passes, one that missed a required call fails.
"""

from __future__ import annotations

from typing import Final

from groundtrace.analyzer.cases import Case
from groundtrace.collectors.model import Trace

__all__ = ["NO_TOOL_CALLS", "not_applicable"]

#: The reason of a ``not_applicable`` verdict, as the reports show it.
NO_TOOL_CALLS: Final = "no tool calls"


def not_applicable(case: Case, trace: Trace) -> str | None:
    """Why the path channel does not apply to ``trace`` of ``case`` (``None``: it applies).

    It applies when the trace ran a tool call, when the case declares its expected path (even
    an empty one: a run without calls passes) or requires a read, a call or a value (then a
    trace without calls fails: ``missing_command``, ``missing_value``...).
    """
    required = case.required_reads or case.required_calls or case.required_values
    if trace.tool_calls or case.declares_path or required:
        return None
    return NO_TOOL_CALLS
