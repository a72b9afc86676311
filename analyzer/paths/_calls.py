"""Required tool calls vs executed calls, in the style of the BFCL AST checker.

A required call names a function and, per argument, a list of acceptable values; ``""``
among them marks the argument optional. An executed call matches when

* the function name is the same;
* every non-optional argument is present and no argument is unknown (to the constraint,
  and to the declared function schema when one is given);
* every value has the declared JSON type (``integer`` is an ``int``, neither a ``bool`` nor
  a ``float``: ``600.0`` is refused; a ``float``/``number`` parameter also accepts an
  ``int``; ``array``/``tuple`` are lists whose items are checked against ``items.type``),
  unless the ground truth lists the value with another type itself (BFCL's "variable"
  rule: ``x="data['sales']"`` for an ``array`` parameter);
* every value is among the acceptable ones. Strings compare after BFCL's standardisation
  (spaces and ``,./-_*^`` removed, lower-cased, ``'`` read as ``"``); numbers compare
  numerically (``1 == 1.0``, but ``True`` is not ``1``); lists element-wise; a dict
  constraint (key -> acceptable values) checks each key, with ``""`` marking optional keys.

Sets of calls are matched without order (a maximum bipartite matching of fully matching
pairs) or in order (each required call after the previous match). Errors are typed
(:class:`CallErrorCode`); the first error of the closest candidate is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from groundtrace.analyzer.cases import RequiredCall

from ._types import CallError, CallErrorCode

__all__ = [
    "CallMatch",
    "ExecutedCall",
    "check_calls",
    "diagnose_call",
    "standardise_string",
    "value_matches",
]

_STANDARDISE_RE: Final = re.compile(r"[ ,./\-_*^]")
_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "float": (float, int),
    "number": (float, int),
    "boolean": (bool,),
    "array": (list, tuple),
    "tuple": (list, tuple),
    "dict": (dict,),
    "object": (dict,),
}


@dataclass(frozen=True, slots=True)
class ExecutedCall:
    """A call that was executed (or emitted) with decoded arguments."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CallMatch:
    """Outcome of matching required calls against executed ones.

    Attributes:
        pairs: ``required index -> executed index`` of the fully matching calls.
        errors: typed errors for every unmatched required call (and, in strict mode,
            every unmatched executed call).
    """

    pairs: dict[int, int]
    errors: tuple[CallError, ...]

    @property
    def ok(self) -> bool:
        """Whether every required call matched (and nothing unexpected ran, when strict)."""
        return not self.errors


def standardise_string(text: str) -> str:
    """BFCL's string standardisation: drop spaces and ``,./-_*^``, lower-case, ``'`` -> ``"``."""
    return _STANDARDISE_RE.sub("", text).lower().replace("'", '"')


def _is_optional(acceptable: Sequence[Any]) -> bool:
    return any(isinstance(a, str) and a == "" for a in acceptable)


def _scalar_equal(value: Any, wanted: Any) -> bool:
    if isinstance(value, bool) or isinstance(wanted, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value == wanted
    if isinstance(value, int | float) and isinstance(wanted, int | float):
        return float(value) == float(wanted)
    if isinstance(value, str) and isinstance(wanted, str):
        return standardise_string(value) == standardise_string(wanted)
    return bool(value == wanted)


def _dict_matches(value: Any, constraint: Mapping[str, Any]) -> bool:
    if not isinstance(value, Mapping):
        return False
    for key, item in value.items():
        if key not in constraint:
            return False
        acceptable = constraint[key]
        if not isinstance(acceptable, list):
            acceptable = [acceptable]
        if not value_matches(item, acceptable):
            return False
    return all(
        key in value or (isinstance(acc, list) and _is_optional(acc))
        for key, acc in constraint.items()
    )


def _single_matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        return _dict_matches(value, wanted)
    if isinstance(wanted, list | tuple):
        if not isinstance(value, list | tuple) or len(value) != len(wanted):
            return False
        return all(_single_matches(v, w) for v, w in zip(value, wanted, strict=True))
    return _scalar_equal(value, wanted)


def value_matches(value: Any, acceptable: Sequence[Any]) -> bool:
    """Whether ``value`` is among ``acceptable`` (``""`` entries are not values)."""
    return any(
        _single_matches(value, wanted)
        for wanted in acceptable
        if not (isinstance(wanted, str) and wanted == "")
    )


def _type_ok(value: Any, schema: Mapping[str, Any]) -> bool:
    declared = schema.get("type")
    if not isinstance(declared, str) or declared not in _TYPES:
        return True  # "any" or unknown: no type constraint
    allowed = _TYPES[declared]
    if isinstance(value, bool) and bool not in allowed:
        return False
    if not isinstance(value, allowed):
        return False
    items = schema.get("items")
    if isinstance(value, list | tuple) and isinstance(items, Mapping):
        return all(_type_ok(v, items) for v in value)
    return True


def _is_variable(value: Any, acceptable: Sequence[Any], param: Mapping[str, Any]) -> bool:
    """BFCL's "variable" rule: the ground truth lists this value with a type other than the
    declared one (``x="data['sales']"`` for an ``array`` parameter), so its type is no error.
    A ground-truth value of the declared type gives no such licence: ``600.0`` for an
    ``integer`` parameter whose ground truth is ``600`` is a type error."""
    return any(
        not _type_ok(wanted, param) and _single_matches(value, wanted)
        for wanted in acceptable
        if not (isinstance(wanted, str) and wanted == "")
    )


def diagnose_call(
    required: RequiredCall,
    executed: ExecutedCall,
    schema: Mapping[str, Any] | None = None,
    *,
    required_index: int | None = None,
    executed_index: int | None = None,
) -> CallError | None:
    """The first reason ``executed`` does not satisfy ``required`` (``None``: it does).

    Args:
        required: the required call.
        executed: the executed call.
        schema: the function's declared parameters (``{"properties", "required"}``), if known.
        required_index: index reported in the error.
        executed_index: index reported in the error.
    """

    def error(code: CallErrorCode, message: str, argument: str | None = None) -> CallError:
        return CallError(code, message, required_index, executed_index, argument)

    if executed.name != required.name:
        return error(
            CallErrorCode.WRONG_FUNCTION,
            f"expected a call of {required.name!r}, got {executed.name!r}",
        )
    properties: Mapping[str, Any] = (schema or {}).get("properties") or {}
    schema_required = set((schema or {}).get("required") or ())
    for arg in executed.arguments:
        if arg not in required.arguments or (schema is not None and arg not in properties):
            return error(
                CallErrorCode.UNEXPECTED_ARGUMENT,
                f"{required.name}: unexpected argument {arg!r}",
                arg,
            )
    for arg, wanted in required.arguments.items():
        if arg not in executed.arguments and (not _is_optional(wanted) or arg in schema_required):
            return error(
                CallErrorCode.MISSING_ARGUMENT,
                f"{required.name}: missing argument {arg!r}",
                arg,
            )
    for arg in schema_required:
        if arg not in executed.arguments:
            return error(
                CallErrorCode.MISSING_ARGUMENT, f"{required.name}: missing argument {arg!r}", arg
            )
    for arg, value in executed.arguments.items():
        param = properties.get(arg)
        acceptable = required.arguments.get(arg)
        listed = acceptable is not None and value_matches(value, acceptable)
        if (
            isinstance(param, Mapping)
            and not _type_ok(value, param)
            and not _is_variable(value, acceptable or (), param)
        ):
            return error(
                CallErrorCode.WRONG_TYPE,
                f"{required.name}: argument {arg!r} = {value!r} is not of type "
                f"{param.get('type')!r}",
                arg,
            )
        if acceptable is not None and not listed:
            shown = [a for a in acceptable if a != ""]
            return error(
                CallErrorCode.WRONG_VALUE,
                f"{required.name}: argument {arg!r} = {value!r} is not among {shown!r}",
                arg,
            )
    return None


def _max_matching(edges: list[list[int]], n_right: int) -> dict[int, int]:
    owner: dict[int, int] = {}

    def augment(left: int, seen: set[int]) -> bool:
        for right in edges[left]:
            if right in seen:
                continue
            seen.add(right)
            if right not in owner or augment(owner[right], seen):
                owner[right] = left
                return True
        return False

    for left in range(len(edges)):
        augment(left, set())
    return {left: right for right, left in owner.items()}


def check_calls(
    required: Sequence[RequiredCall],
    executed: Sequence[ExecutedCall],
    *,
    ordered: bool = False,
    strict: bool = False,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
    candidates: Sequence[int] | None = None,
) -> CallMatch:
    """Match required calls against executed ones.

    Args:
        required: the required calls.
        executed: every executed call, in execution order.
        ordered: whether the required calls must be matched in their order.
        strict: whether every executed call must be matched (BFCL: exactly these calls);
            otherwise extra calls are allowed.
        schemas: function name -> declared parameters, for type and unknown-argument checks.
        candidates: indices of ``executed`` that may satisfy a required call (default all);
            the others are still used for the diagnosis of unmatched required calls.

    Returns:
        The :class:`CallMatch`.
    """
    schemas = schemas or {}
    allowed = list(range(len(executed))) if candidates is None else list(candidates)

    def fits(r: int, e: int) -> bool:
        return diagnose_call(required[r], executed[e], schemas.get(required[r].name)) is None

    errors: list[CallError] = []
    if ordered:
        pairs: dict[int, int] = {}
        position = 0
        for r in range(len(required)):
            hit = next((e for e in allowed if e >= position and fits(r, e)), None)
            if hit is not None:
                pairs[r] = hit
                position = hit + 1
            elif any(fits(r, e) for e in allowed if e not in pairs.values()):
                e = next(e for e in allowed if e not in pairs.values() and fits(r, e))
                errors.append(
                    CallError(
                        CallErrorCode.WRONG_ORDER,
                        f"{required[r].name} ran, but before the call required ahead of it",
                        r,
                        e,
                    )
                )
                pairs[r] = e
    else:
        edges = [[e for e in allowed if fits(r, e)] for r in range(len(required))]
        pairs = _max_matching(edges, len(executed))
    used = set(pairs.values())
    order_flagged = {err.required_index for err in errors}
    for r, call in enumerate(required):
        if r in pairs or r in order_flagged:
            continue
        same = [e for e in range(len(executed)) if e not in used and executed[e].name == call.name]
        if same:
            diagnoses = [
                diagnose_call(
                    call, executed[e], schemas.get(call.name), required_index=r, executed_index=e
                )
                for e in same
            ]
            found = next((d for d in diagnoses if d is not None), None)
            errors.append(
                found
                or CallError(CallErrorCode.MISSING_CALL, f"required call {call.name} unmatched", r)
            )
            if strict:
                used.add(same[0])
            continue
        others = [
            e
            for e in range(len(executed))
            if e not in used and not any(c.name == executed[e].name for c in required)
        ]
        if strict and others:
            used.add(others[0])
            errors.append(
                CallError(
                    CallErrorCode.WRONG_FUNCTION,
                    f"expected a call of {call.name!r}, got {executed[others[0]].name!r}",
                    r,
                    others[0],
                )
            )
            continue
        errors.append(
            CallError(CallErrorCode.MISSING_CALL, f"required call {call.name} never ran", r)
        )
    if strict:
        for e, call_e in enumerate(executed):
            if e not in used:
                errors.append(
                    CallError(
                        CallErrorCode.UNEXPECTED_CALL,
                        f"unexpected call of {call_e.name!r}",
                        None,
                        e,
                    )
                )
    return CallMatch(pairs=pairs, errors=tuple(errors))
