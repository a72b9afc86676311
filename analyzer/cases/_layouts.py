"""External dataset layouts mapped onto :class:`Case`: HotpotQA, 2WikiMultihopQA, tau-bench,
tau2-bench, BFCL (single and multi-turn, :mod:`._multiturn`) and judge items.

Each layout is described by the msgspec structs of its own rows, so a bad row fails naming
the dataset's field (``context[3][1]``), then mapped to a case. Top-level fields a layout has
but the case model does not are kept in :attr:`Case.metadata`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ._model import Case, Passage, RequiredCall, SupportingFact, ToolSpec
from ._multiturn import BfclMessage, multi_turn_case

__all__ = ["LAYOUTS", "LayoutError", "bfcl_calls", "layout_of", "to_case"]

_Row = Mapping[str, Any]


class LayoutError(ValueError):
    """A field the structs cannot check is malformed; ``field`` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class _Hotpot(msgspec.Struct, frozen=True, rename={"id": "_id"}):
    id: str
    question: str
    answer: str
    context: list[tuple[str, list[str]]]
    supporting_facts: list[SupportingFact] = []
    evidences: list[tuple[str, str, str]] | None = None


class _TauAction(msgspec.Struct, frozen=True):
    name: str
    kwargs: dict[str, Any] = {}


class _TauTask(msgspec.Struct, frozen=True):
    actions: list[_TauAction]
    outputs: list[str | int | float] = []
    instruction: str | None = None


class _TauInfo(msgspec.Struct, frozen=True):
    task: _TauTask


class _Tau(msgspec.Struct, frozen=True):
    task_id: str | int
    info: _TauInfo
    trial: int | None = None


class _Tau2Action(msgspec.Struct, frozen=True):
    name: str
    arguments: dict[str, Any] = {}


class _Tau2Criteria(msgspec.Struct, frozen=True):
    actions: list[_Tau2Action] | None = None
    communicate_info: list[str] | None = None


class _Tau2Instructions(msgspec.Struct, frozen=True):
    reason_for_call: str | None = None


class _Tau2Scenario(msgspec.Struct, frozen=True):
    instructions: _Tau2Instructions | str | None = None


class _Tau2(msgspec.Struct, frozen=True):
    id: str | int
    evaluation_criteria: _Tau2Criteria | None
    user_scenario: _Tau2Scenario | None = None


class _Bfcl(msgspec.Struct, frozen=True):
    id: str
    question: list[list[BfclMessage]]
    function: list[ToolSpec]


class _JudgeItem(msgspec.Struct, frozen=True):
    id: str | int | None = None
    item_id: str | int | None = None
    case_id: str | int | None = None
    question: str | None = None
    query: str | None = None
    context: str | list[str] | None = None
    contexts: str | list[str] | None = None
    evidence: str | list[str] | None = None
    answer: str | None = None
    response: str | None = None


_JUDGE_CONTEXT = ("context", "contexts", "evidence")

#: Layout name -> the top-level fields it maps (the rest goes to metadata).
LAYOUTS: dict[str, frozenset[str]] = {
    "hotpotqa": frozenset({"_id", "question", "answer", "context", "supporting_facts"}),
    "2wikimultihopqa": frozenset(
        {"_id", "question", "answer", "context", "supporting_facts", "evidences"}
    ),
    "tau-bench": frozenset({"task_id", "trial", "info"}),
    "tau2-bench": frozenset({"id", "evaluation_criteria"}),
    "bfcl": frozenset({"id", "question", "function"}),
    "bfcl-multi-turn": frozenset({"id", "question", "involved_classes"}),
    "judge": frozenset(_JudgeItem.__struct_fields__),
}


def layout_of(row: _Row) -> str:
    """The layout of one row: a key of :data:`LAYOUTS`, or ``groundtrace`` (the case model)."""
    if "_id" in row:
        return "2wikimultihopqa" if "evidences" in row else "hotpotqa"
    if "evaluation_criteria" in row:
        return "tau2-bench"
    if "task_id" in row and "info" in row:
        return "tau-bench"
    if "id" in row and "question" in row and "involved_classes" in row:
        return "bfcl-multi-turn"
    if "id" in row and "function" in row:
        return "bfcl"
    if any(key in row for key in _JUDGE_CONTEXT):
        return "judge"
    return "groundtrace"


def _exact(value: Any) -> Any:
    """A ground-truth value as a constraint: nested objects take exactly their values."""
    if isinstance(value, dict):
        return {str(k): [_exact(v)] for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return value


def _exact_call(name: str, arguments: Mapping[str, Any]) -> RequiredCall:
    return RequiredCall(name, {str(k): [_exact(v)] for k, v in arguments.items()})


def bfcl_calls(truth: Any) -> tuple[RequiredCall, ...]:
    """BFCL ground truth ``[{function: {argument: [acceptable values]}}]`` as required calls.

    Raises:
        LayoutError: naming the item (``ground_truth[i]``) that is not of that form.
    """
    if not isinstance(truth, list):
        raise LayoutError("ground_truth must be a list", "ground_truth")
    calls: list[RequiredCall] = []
    for i, raw in enumerate(truth):
        where = f"ground_truth[{i}]"
        if not isinstance(raw, dict) or len(raw) != 1:
            raise LayoutError("a ground-truth call must be {name: {arg: [values]}}", where)
        ((name, args),) = raw.items()
        if not isinstance(args, dict) or not all(isinstance(v, list) for v in args.values()):
            raise LayoutError("arguments must map to lists of acceptable values", where)
        calls.append(RequiredCall(str(name), {str(k): list(v) for k, v in args.items()}))
    return tuple(calls)


def _hotpot(row: _Row, metadata: dict[str, Any], sep: str) -> Case:
    item = msgspec.convert(row, _Hotpot)
    titles = tuple(dict.fromkeys(fact.title for fact in item.supporting_facts))
    return Case(
        case_id=item.id,
        question=item.question,
        reference_answer=item.answer,
        support_titles=titles,
        supporting_facts=tuple(item.supporting_facts),
        evidences=tuple(item.evidences or ()),
        passages=tuple(
            Passage(f"{item.id}:{i}", title, sep.join(sentences), tuple(sentences))
            for i, (title, sentences) in enumerate(item.context)
        ),
        metadata=metadata,
    )


def _tau(row: _Row, metadata: dict[str, Any]) -> Case:
    item = msgspec.convert(row, _Tau)
    task = item.info.task
    trial = "" if item.trial is None else f":{item.trial}"
    return Case(
        case_id=f"{item.task_id}{trial}",
        question=task.instruction,
        required_calls=tuple(_exact_call(a.name, a.kwargs) for a in task.actions),
        required_values=tuple(str(o) for o in task.outputs),
        declares_path=True,
        metadata=metadata,
    )


def _tau2(row: _Row, metadata: dict[str, Any]) -> Case:
    item = msgspec.convert(row, _Tau2)
    criteria = item.evaluation_criteria or _Tau2Criteria()
    instructions = item.user_scenario.instructions if item.user_scenario else None
    if isinstance(instructions, _Tau2Instructions):
        question = instructions.reason_for_call
    else:
        question = instructions
    return Case(
        case_id=str(item.id),
        question=question,
        required_calls=tuple(_exact_call(a.name, a.arguments) for a in criteria.actions or ()),
        required_values=tuple(criteria.communicate_info or ()),
        declares_path=criteria.actions is not None,
        metadata=metadata,
    )


def _bfcl(row: _Row, metadata: dict[str, Any]) -> Case:
    item = msgspec.convert(row, _Bfcl)
    turns = [m.content for turn in item.question for m in turn if m.role == "user"]
    return Case(
        case_id=item.id,
        question="\n".join(turns),
        tools=tuple(item.function),
        metadata=metadata,
    )


def _judge(row: _Row, metadata: dict[str, Any], line: int | None) -> Case:
    item = msgspec.convert(row, _JudgeItem)
    ids = (item.id, item.item_id, item.case_id)
    case_id = next((str(i) for i in ids if i is not None), f"line-{line}")
    context = next((c for c in (item.context, item.contexts, item.evidence) if c is not None), ())
    texts = (context,) if isinstance(context, str) else tuple(context)
    return Case(
        case_id=case_id,
        question=item.question if item.question is not None else item.query,
        response=item.answer if item.answer is not None else item.response,
        passages=tuple(Passage(f"{case_id}:{i}", text=t) for i, t in enumerate(texts)),
        metadata=metadata,
    )


def to_case(row: _Row, layout: str, line: int | None = None) -> Case:
    """The case of one row in an external ``layout`` (``line`` names a judge item without id).

    Raises:
        msgspec.ValidationError: a field of the layout is missing or of the wrong type.
    """
    metadata = {k: v for k, v in row.items() if k not in LAYOUTS[layout]}
    if layout == "hotpotqa":
        # HotpotQA sentences carry their own leading spaces: joined as they are.
        return _hotpot(row, metadata, "")
    if layout == "2wikimultihopqa":
        # 2WikiMultihopQA sentences carry none: joined with one space.
        return _hotpot(row, metadata, " ")
    if layout == "tau-bench":
        return _tau(row, metadata)
    if layout == "tau2-bench":
        return _tau2(row, metadata)
    if layout == "judge":
        return _judge(row, metadata, line)
    if layout == "bfcl-multi-turn":
        return multi_turn_case(row, metadata)
    return _bfcl(row, metadata)
