"""Berkeley Function Calling Leaderboard (BFCL v4) items: concretise, check.

A BFCL item is a question with function declarations (``BFCL_v4_<category>.jsonl``) and
its ground truth (``possible_answer/BFCL_v4_<category>.jsonl``): a list of calls, each
``{function: {argument: [acceptable values]}}`` where ``""`` marks an optional argument.
:func:`groundtrace.analyzer.cases.read_cases` reads both into cases (``tools`` and
``required_calls``).
:func:`check_item` scores emitted calls with :func:`check_calls` in strict, unordered mode
(exactly these calls, any order), using the declared parameter types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from groundtrace.analyzer.cases import Case

from ._calls import CallMatch, ExecutedCall, check_calls

__all__ = ["check_item", "concrete_calls"]


def _schemas(case: Case) -> dict[str, dict[str, Any]]:
    """Function name -> declared ``parameters`` object of the case's tools."""
    return {tool.name: dict(tool.parameters) for tool in case.tools}


def _first_value(acceptable: Sequence[Any]) -> tuple[bool, Any]:
    for value in acceptable:
        if isinstance(value, str) and value == "":
            continue
        return True, _concrete(value)
    return False, None


def _concrete(value: Any) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, acceptable in value.items():
            if isinstance(acceptable, list):
                if any(isinstance(a, str) and a == "" for a in acceptable):
                    continue
                found, first = _first_value(acceptable)
                if found:
                    out[str(key)] = first
            else:
                out[str(key)] = acceptable
        return out
    if isinstance(value, list):
        return [_concrete(v) for v in value]
    return value


def concrete_calls(item: Case) -> list[ExecutedCall]:
    """The ground truth as concrete calls: the first acceptable value of every argument that
    is non-optional or declared ``required`` by the function (optional ones are left out)."""
    calls: list[ExecutedCall] = []
    declared_by = _schemas(item)
    for call in item.required_calls:
        declared = set(declared_by.get(call.name, {}).get("required") or ())
        args: dict[str, Any] = {}
        for name, acceptable in call.arguments.items():
            optional = any(isinstance(a, str) and a == "" for a in acceptable)
            if optional and name not in declared:
                continue
            found, value = _first_value(acceptable)
            if found:
                args[name] = value
        calls.append(ExecutedCall(name=call.name, arguments=args))
    return calls


def check_item(item: Case, emitted: Sequence[ExecutedCall]) -> CallMatch:
    """Score emitted calls against the item: exactly the ground-truth calls, any order."""
    return check_calls(item.required_calls, emitted, strict=True, schemas=_schemas(item))
