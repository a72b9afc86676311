"""Path cases from tau-bench rows: the task's ground-truth actions as required calls.

tau-bench (sierra-research/tau-bench) stores per run ``task_id``, ``trial``, ``reward`` and
``info.task`` with ``actions`` (``name`` + ``kwargs``) and ``outputs`` (values the agent
must tell the user). The reward compares the final database state, so only the *write*
actions must match: they become required calls (every argument exactly the ground-truth
value, order-insensitive) and exclusive tools (an extra successful write is an error);
read actions (lookups, search, ``think``...) are free. ``outputs`` become required values.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

import msgspec

from groundtrace.analyzer.cases import Case, read_cases

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


def tau_bench_cases(
    path: str | os.PathLike[str], write_tools: tuple[str, ...] = AIRLINE_WRITE_TOOLS
) -> Iterator[Case]:
    """The cases of a tau-bench results file (or tau2-bench tasks), writes only required.

    The file is read by :func:`groundtrace.analyzer.cases.read_cases` (case ids
    ``<task_id>:<trial>`` as the transcripts collector names its traces); of the ground-truth
    actions only the calls of ``write_tools`` stay required, and those tools are exclusive.

    Raises:
        InputError: unreadable file or a malformed row (file, line and field named).
    """
    for case in read_cases(path):
        writes = tuple(call for call in case.required_calls if call.name in write_tools)
        yield msgspec.structs.replace(case, required_calls=writes, exclusive_tools=write_tools)
