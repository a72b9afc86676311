"""Path cases (JSONL): what a trace must have run, read and carried into its answer.

One JSON object per line::

    {"id": "q1", "question": "How long is the warranty?", "reference_answer": "24 months",
     "require_path": true,
     "required_reads": ["handbook/warranty.md"],
     "required_calls": [{"name": "lookup_price",
                         "arguments": {"sku": ["NB-200"], "currency": ["EUR", ""]}}],
     "ordered": false,
     "allowed_commands": ["search", "read_document", "lookup_price"],
     "exclusive_tools": ["lookup_price"],
     "required_values": ["24 months"]}

Fields: ``id`` (or ``case_id``, required); ``require_path`` (default true: false means no
strict check, status ``not_required``); ``required_reads`` (paths / document ids that must
be read successfully); ``required_calls`` (acceptable values per argument, ``""`` marks an
optional argument, see :mod:`._calls`); ``ordered`` (required calls in order);
``allowed_commands`` (if given, any other executed tool is a ``disallowed_command``);
``exclusive_tools`` (every successful call of these tools must be one of the required
calls: e.g. write actions of an agent); ``required_values`` (values from tool results the
answer must carry); ``reference_answer`` (or ``answer``) for the text channel.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from groundtrace.analyzer.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl

from ._tools_config import normalise_resource
from ._types import RequiredCall

__all__ = ["PathCase", "parse_case", "read_path_cases"]

_KNOWN = frozenset(
    {
        "id",
        "case_id",
        "question",
        "reference_answer",
        "answer",
        "require_path",
        "required_reads",
        "required_calls",
        "ordered",
        "allowed_commands",
        "exclusive_tools",
        "required_values",
        "notes",
    }
)


@dataclass(frozen=True, slots=True)
class PathCase:
    """One path case (see the module docstring for the fields)."""

    case_id: str
    question: str | None = None
    reference_answer: str | None = None
    require_path: bool = True
    required_reads: tuple[str, ...] = ()
    required_calls: tuple[RequiredCall, ...] = ()
    ordered: bool = False
    allowed_commands: tuple[str, ...] | None = None
    exclusive_tools: tuple[str, ...] = ()
    required_values: tuple[str, ...] = ()


def _strings(row: dict[str, Any], key: str, err: Any) -> tuple[str, ...]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise err(f"{key} must be a list of strings", key)
    return tuple(value)


def _calls(row: dict[str, Any], err: Any) -> tuple[RequiredCall, ...]:
    raw = row.get("required_calls", [])
    if not isinstance(raw, list):
        raise err("required_calls must be a list", "required_calls")
    calls: list[RequiredCall] = []
    for i, item in enumerate(raw):
        where = f"required_calls[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise err("each required call needs a string 'name'", where)
        args = item.get("arguments", {})
        if not isinstance(args, dict):
            raise err("arguments must be an object", f"{where}.arguments")
        for arg, acceptable in args.items():
            if not isinstance(acceptable, list) or not acceptable:
                raise err(
                    "must be a non-empty list of acceptable values ('' marks optional)",
                    f"{where}.arguments.{arg}",
                )
        arguments = {str(k): list(v) for k, v in args.items()}
        calls.append(RequiredCall(name=item["name"], arguments=arguments))
    return tuple(calls)


def parse_case(row: Any, *, path: str = "<cases>", line: int | None = None) -> PathCase:
    """Validate one case object.

    Raises:
        InputError: naming ``path``, ``line`` and the field that is wrong.
    """

    def err(message: str, fld: str | None = None) -> InputError:
        return InputError(message, path=path, line=line, field=fld)

    if not isinstance(row, dict):
        raise err("a case must be a JSON object")
    unknown = sorted(set(row) - _KNOWN)
    if unknown:
        raise err(f"unknown field(s) {unknown}; known: {sorted(_KNOWN)}", unknown[0])
    case_id = row.get("id", row.get("case_id"))
    if not isinstance(case_id, str | int) or isinstance(case_id, bool) or str(case_id) == "":
        raise err("a case needs a non-empty 'id'", "id")
    reference = row.get("reference_answer", row.get("answer"))
    if reference is not None and not isinstance(reference, str):
        raise err("must be a string", "reference_answer")
    question = row.get("question")
    if question is not None and not isinstance(question, str):
        raise err("must be a string", "question")
    for flag in ("require_path", "ordered"):
        if flag in row and not isinstance(row[flag], bool):
            raise err("must be true or false", flag)
    allowed = row.get("allowed_commands")
    return PathCase(
        case_id=str(case_id),
        question=question,
        reference_answer=reference,
        require_path=row.get("require_path", True),
        required_reads=tuple(normalise_resource(r) for r in _strings(row, "required_reads", err)),
        required_calls=_calls(row, err),
        ordered=row.get("ordered", False),
        allowed_commands=None if allowed is None else _strings(row, "allowed_commands", err),
        exclusive_tools=_strings(row, "exclusive_tools", err),
        required_values=_strings(row, "required_values", err),
    )


def read_path_cases(path: str | os.PathLike[str]) -> Iterator[PathCase]:
    """Read a JSONL case file (blank lines and ``#`` comment lines skipped).

    Raises:
        InputError: unreadable file, invalid JSON, a bad field or a duplicate id (with
            file, line and field).
    """
    name = os.fspath(path)
    seen: dict[str, int] = {}
    for line_no, row in read_jsonl(name, what="case file", objects=False, comments=True):
        case = parse_case(row, path=name, line=line_no)
        if case.case_id in seen:
            raise InputError(
                f"duplicate case id {case.case_id!r} (first on line {seen[case.case_id]})",
                path=name,
                line=line_no,
                field="id",
            )
        seen[case.case_id] = line_no
        yield case
