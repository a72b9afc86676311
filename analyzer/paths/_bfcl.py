"""Berkeley Function Calling Leaderboard (BFCL v4) items: load, concretise, check.

A BFCL item is a question with function declarations (``BFCL_v4_<category>.jsonl``) and
its ground truth (``possible_answer/BFCL_v4_<category>.jsonl``): a list of calls, each
``{function: {argument: [acceptable values]}}`` where ``""`` marks an optional argument.
:func:`check_item` scores emitted calls with :func:`check_calls` in strict, unordered mode
(exactly these calls, any order), using the declared parameter types.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl

from ._calls import CallMatch, ExecutedCall, check_calls
from ._types import RequiredCall

__all__ = ["BfclItem", "check_item", "concrete_calls", "read_bfcl"]


@dataclass(frozen=True, slots=True)
class BfclItem:
    """One BFCL question with its declared functions and ground truth.

    Attributes:
        id: the item id, e.g. ``"parallel_3"``.
        category: the file's category (``simple_python``, ``multiple``...).
        schemas: function name -> declared ``parameters`` object.
        ground_truth: the required calls.
    """

    id: str
    category: str
    schemas: dict[str, dict[str, Any]]
    ground_truth: tuple[RequiredCall, ...]


def _required_call(raw: Any, where: str, path: str, line: int) -> RequiredCall:
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise InputError(
            "a ground-truth call must be {name: {arg: [values]}}", path=path, line=line, field=where
        )
    ((name, args),) = raw.items()
    if not isinstance(args, Mapping) or not all(isinstance(v, list) for v in args.values()):
        raise InputError(
            "arguments must map to lists of acceptable values", path=path, line=line, field=where
        )
    return RequiredCall(name=str(name), arguments={str(k): list(v) for k, v in args.items()})


def read_bfcl(questions: str | Path, answers: str | Path | None = None) -> Iterator[BfclItem]:
    """Read one BFCL category: the questions file and its ``possible_answer`` twin.

    Args:
        questions: ``.../BFCL_v4_<category>.jsonl``.
        answers: the ground-truth file (default: ``possible_answer/`` beside ``questions``).

    Raises:
        InputError: a file is missing, a line is not JSON, or ids do not line up.
    """
    q_path = Path(questions)
    default = q_path.parent / "possible_answer" / q_path.name
    a_path = Path(answers) if answers is not None else default
    category = q_path.stem.removeprefix("BFCL_v4_")
    answers_by_id: dict[str, tuple[int, Any]] = {}
    for line_no, row in read_jsonl(a_path, what="BFCL file"):
        answers_by_id[str(row.get("id"))] = (line_no, row.get("ground_truth"))
    for line_no, row in read_jsonl(q_path, what="BFCL file"):
        item_id = str(row.get("id"))
        if item_id not in answers_by_id:
            raise InputError(f"no ground truth for {item_id}", path=str(a_path), field="id")
        a_line, truth = answers_by_id[item_id]
        if not isinstance(truth, list):
            raise InputError(
                "ground_truth must be a list", path=str(a_path), line=a_line, field="ground_truth"
            )
        functions = row.get("function")
        if not isinstance(functions, list):
            raise InputError(
                "function must be a list", path=str(q_path), line=line_no, field="function"
            )
        schemas = {
            str(fn["name"]): dict(fn.get("parameters") or {})
            for fn in functions
            if isinstance(fn, Mapping) and "name" in fn
        }
        calls = tuple(
            _required_call(raw, f"ground_truth[{i}]", str(a_path), a_line)
            for i, raw in enumerate(truth)
        )
        yield BfclItem(id=item_id, category=category, schemas=schemas, ground_truth=calls)


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


def concrete_calls(item: BfclItem) -> list[ExecutedCall]:
    """The ground truth as concrete calls: the first acceptable value of every argument that
    is non-optional or declared ``required`` by the function (optional ones are left out)."""
    calls: list[ExecutedCall] = []
    for call in item.ground_truth:
        declared = set(item.schemas.get(call.name, {}).get("required") or ())
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


def check_item(item: BfclItem, emitted: Sequence[ExecutedCall]) -> CallMatch:
    """Score emitted calls against the item: exactly the ground-truth calls, any order."""
    return check_calls(item.ground_truth, emitted, strict=True, schemas=item.schemas)
