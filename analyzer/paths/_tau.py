"""Path cases from tau-bench rows: the task's ground-truth actions as required calls.

tau-bench (sierra-research/tau-bench) stores per run ``task_id``, ``trial``, ``reward`` and
``info.task`` with ``actions`` (``name`` + ``kwargs``) and ``outputs`` (values the agent
must tell the user). The reward compares the final database state, so only the *write*
actions must match: they become required calls (every argument exactly the ground-truth
value, order-insensitive) and exclusive tools (an extra successful write is an error);
read actions (lookups, search, ``think``...) are free. ``outputs`` become required values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from groundtrace.analyzer.errors import InputError

from ._cases import PathCase
from ._types import RequiredCall

__all__ = ["AIRLINE_WRITE_TOOLS", "tau_bench_cases"]

#: The airline domain's tools that change the database (tau-bench ``envs/airline/tools``).
AIRLINE_WRITE_TOOLS: Final = (
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
)


def _constraint(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): [_constraint(v)] for k, v in value.items()}
    if isinstance(value, list):
        return [_constraint(v) for v in value]
    return value


def tau_bench_cases(
    path: str | os.PathLike[str], write_tools: tuple[str, ...] = AIRLINE_WRITE_TOOLS
) -> Iterator[PathCase]:
    """One :class:`PathCase` per row of a tau-bench results file (JSONL or JSON array).

    Case ids are ``<task_id>:<trial>`` as the transcripts collector names its traces.

    Raises:
        InputError: unreadable file or a row without ``info.task.actions``.
    """
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read tau-bench file: {exc}", path=name) from None
    if text.lstrip().startswith("["):
        rows = list(enumerate(json.loads(text), start=1))
    else:
        rows = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((line_no, json.loads(line)))
                except ValueError as exc:
                    raise InputError(f"invalid JSON: {exc}", path=name, line=line_no) from None
    for line_no, row in rows:
        info = row.get("info") if isinstance(row, dict) else None
        task = info.get("task") if isinstance(info, dict) else None
        actions = task.get("actions") if isinstance(task, dict) else None
        if not isinstance(task, dict) or not isinstance(actions, list):
            raise InputError(
                "row has no info.task.actions list",
                path=name,
                line=line_no,
                field="info.task.actions",
            )
        required = tuple(
            RequiredCall(
                name=str(a["name"]),
                arguments={str(k): [_constraint(v)] for k, v in a.get("kwargs", {}).items()},
            )
            for a in actions
            if isinstance(a, dict) and a.get("name") in write_tools
        )
        case_id = str(row.get("task_id"))
        if row.get("trial") is not None:
            case_id = f"{case_id}:{row['trial']}"
        outputs = task.get("outputs") or []
        yield PathCase(
            case_id=case_id,
            question=task.get("instruction"),
            required_calls=required,
            exclusive_tools=write_tools,
            required_values=tuple(str(o) for o in outputs),
        )
