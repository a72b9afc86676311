"""BFCL multi-turn items: a list of turns, with one list of call strings per turn as truth.

A question row (``BFCL_v4_multi_turn_<category>.json``) is
``{"id", "question": [[{"role", "content"}...] per turn], "initial_config", "path",
"involved_classes"}`` (``missed_function`` in the miss-function category); its ground truth
(``possible_answer/`` of the same name) is ``{"id", "ground_truth": [["cd(folder='x')", ...]
per turn]}``. Each call string is a Python call with literal arguments; a positional argument
(``"sort('report.pdf')"``) is named by the declared order of the function's parameters in
the class docs BFCL ships (``multi_turn_func_doc/<class file>.json``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from ._model import Case, RequiredCall, ToolSpec, Turn

__all__ = [
    "CLASS_DOCS",
    "BfclMessage",
    "MultiTurnError",
    "bfcl_turns",
    "class_tools",
    "multi_turn_case",
    "parse_call",
]

#: BFCL's API classes -> their function-doc file in ``multi_turn_func_doc/``.
CLASS_DOCS: Final[dict[str, str]] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
}


class MultiTurnError(ValueError):
    """A malformed multi-turn field; ``field`` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class BfclMessage(msgspec.Struct, frozen=True):
    """One message of a BFCL item's question (single- and multi-turn files alike)."""

    role: str
    content: str


class _BfclMultiTurn(msgspec.Struct, frozen=True):
    id: str
    question: list[list[BfclMessage]]
    involved_classes: list[str] = []


def multi_turn_case(row: Mapping[str, Any], metadata: dict[str, Any]) -> Case:
    """The case of a question row: one :class:`Turn` per turn, calls from the ground truth.

    Raises:
        msgspec.ValidationError: a field is missing or of the wrong type.
    """
    item = msgspec.convert(row, _BfclMultiTurn)
    turns = tuple(
        Turn(question="\n".join(m.content for m in turn if m.role == "user") or None)
        for turn in item.question
    )
    questions = [t.question for t in turns if t.question]
    return Case(
        case_id=item.id,
        question="\n".join(questions) or None,
        turns=turns,
        metadata={**metadata, "involved_classes": item.involved_classes},
    )


def class_tools(docs: Path, classes: Sequence[str]) -> dict[str, ToolSpec]:
    """The declared functions of ``classes`` (by name) from BFCL's function-doc folder.

    Missing folder or file: no declarations (a positional argument then cannot be named).

    Raises:
        InputError: a doc file that is not JSON lines of function declarations.
    """
    from groundtrace.collectors.jsonl import read_jsonl

    tools: dict[str, ToolSpec] = {}
    for name in classes:
        path = docs / CLASS_DOCS.get(name, "")
        if name not in CLASS_DOCS or not path.is_file():
            continue
        for _, doc in read_jsonl(path, what="BFCL function docs"):
            tool = msgspec.convert(doc, ToolSpec)
            tools[tool.name] = tool
    return tools


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise MultiTurnError(f"{ast.unparse(node)!r} is not a literal value", where) from None


def _exact(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): [_exact(v)] for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    return value


def parse_call(text: Any, tools: Mapping[str, ToolSpec], where: str) -> RequiredCall:
    """One ground-truth call string as a required call (every argument exactly its value)."""
    if not isinstance(text, str):
        raise MultiTurnError('a ground-truth call must be a string like "f(x=1)"', where)
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise MultiTurnError(f"{text!r} is not a function call", where) from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise MultiTurnError(f"{text!r} is not a call of a named function", where)
    name = node.func.id
    arguments: dict[str, list[Any]] = {}
    if node.args:
        tool = tools.get(name)
        order = list((tool.parameters.get("properties") or {}) if tool else ())
        if len(order) < len(node.args):
            raise MultiTurnError(
                f"{text!r} passes {len(node.args)} positional argument(s); naming them needs "
                f"the declaration of {name!r} (BFCL's multi_turn_func_doc/ beside the file)",
                where,
            )
        for param, arg in zip(order, node.args, strict=False):
            arguments[param] = [_exact(_literal(arg, where))]
    for keyword in node.keywords:
        if keyword.arg is None:
            raise MultiTurnError(f"{text!r}: **arguments are not supported", where)
        arguments[keyword.arg] = [_exact(_literal(keyword.value, where))]
    return RequiredCall(name, arguments)


def bfcl_turns(truth: Any, tools: Mapping[str, ToolSpec]) -> tuple[tuple[RequiredCall, ...], ...]:
    """The per-turn ground truth ``[["f(x=1)", ...], ...]`` as required calls per turn.

    Raises:
        MultiTurnError: naming ``ground_truth[turn][i]`` when it is not of that form.
    """
    if not isinstance(truth, list) or not all(isinstance(t, list) for t in truth):
        raise MultiTurnError("ground_truth must be a list of turns, each a list", "ground_truth")
    return tuple(
        tuple(parse_call(call, tools, f"ground_truth[{t}][{i}]") for i, call in enumerate(turn))
        for t, turn in enumerate(truth)
    )
