"""The BFCL-style call checker on the real BFCL v4 ground truth, plus mutations."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from groundtrace.analyzer.paths import (
    BfclItem,
    CallErrorCode,
    ExecutedCall,
    RequiredCall,
    check_calls,
    check_item,
    concrete_calls,
    read_bfcl,
)
from tests.support.data import DATA

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")


@pytest.fixture(scope="module")
def items() -> list[BfclItem]:
    folder = DATA / "agent_tools" / "bfcl_v4"
    return [it for c in CATEGORIES for it in read_bfcl(folder / f"BFCL_v4_{c}.jsonl")]


def test_ground_truth_scores_all_correct(items: list[BfclItem]) -> None:
    assert Counter(it.category for it in items) == {
        "simple_python": 400,
        "multiple": 200,
        "parallel": 200,
        "parallel_multiple": 200,
    }
    wrong = {it.id: check_item(it, concrete_calls(it)).errors for it in items}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_dropped_call(items: list[BfclItem]) -> None:
    for it in items:
        calls = concrete_calls(it)
        codes = [e.code for e in check_item(it, calls[:-1]).errors]
        assert codes == [CallErrorCode.MISSING_CALL], it.id


def _first_scalar_arg(call: ExecutedCall, kinds: tuple[type, ...]) -> str | None:
    return next(
        (k for k, v in call.arguments.items() if isinstance(v, kinds) and not isinstance(v, bool)),
        None,
    )


def test_wrong_value(items: list[BfclItem]) -> None:
    tested = 0
    for it in items:
        calls = concrete_calls(it)
        arg = _first_scalar_arg(calls[0], (str,))
        if arg is None:
            continue
        args = dict(calls[0].arguments)
        args[arg] = "zz-not-an-acceptable-value-zz"
        mutated = [ExecutedCall(calls[0].name, args), *calls[1:]]
        errors = check_item(it, mutated).errors
        assert [e.code for e in errors] == [CallErrorCode.WRONG_VALUE], it.id
        assert errors[0].argument == arg
        tested += 1
    assert tested > 600


def test_wrong_type(items: list[BfclItem]) -> None:
    tested = 0
    for it in items:
        calls = concrete_calls(it)
        arg = _first_scalar_arg(calls[0], (int,))
        if arg is None:
            continue
        args = dict(calls[0].arguments)
        args[arg] = str(args[arg]) + "x"
        mutated = [ExecutedCall(calls[0].name, args), *calls[1:]]
        codes = [e.code for e in check_item(it, mutated).errors]
        assert codes == [CallErrorCode.WRONG_TYPE], it.id
        tested += 1
    assert tested > 300


def test_extra_argument(items: list[BfclItem]) -> None:
    for it in items:
        calls = concrete_calls(it)
        args = {**calls[0].arguments, "zz_extra_argument": 1}
        mutated = [ExecutedCall(calls[0].name, args), *calls[1:]]
        errors = check_item(it, mutated).errors
        assert [e.code for e in errors] == [CallErrorCode.UNEXPECTED_ARGUMENT], it.id
        assert errors[0].argument == "zz_extra_argument"


def test_swapped_function(items: list[BfclItem]) -> None:
    tested = 0
    for it in items:
        calls = concrete_calls(it)
        names = {c.name for c in it.ground_truth}
        # a declared function the item does not call, else an undeclared one
        other = next((n for n in it.schemas if n not in names), "zz_undeclared_function")
        mutated = [ExecutedCall(other, calls[0].arguments), *calls[1:]]
        codes = [e.code for e in check_item(it, mutated).errors]
        assert codes == [CallErrorCode.WRONG_FUNCTION], it.id
        tested += 1
    assert tested == len(items)


def test_parallel_order_is_free_but_can_be_required(items: list[BfclItem]) -> None:
    parallel = [it for it in items if it.category == "parallel" and len(it.ground_truth) > 1]
    for it in parallel:
        calls = concrete_calls(it)
        assert check_item(it, calls[::-1]).ok, it.id
    it = next(p for p in parallel if len({str(c.arguments) for c in concrete_calls(p)}) > 1)
    calls = concrete_calls(it)
    ordered = check_calls(it.ground_truth, calls[::-1], ordered=True, schemas=it.schemas)
    assert CallErrorCode.WRONG_ORDER in [e.code for e in ordered.errors]


def test_optional_and_missing_arguments() -> None:
    required = [RequiredCall("f", {"a": [1], "unit": ["cm", ""]})]
    schema = {"f": {"properties": {"a": {"type": "integer"}, "unit": {"type": "string"}},
                    "required": ["a"]}}  # fmt: skip
    assert check_calls(required, [ExecutedCall("f", {"a": 1})], schemas=schema).ok
    assert check_calls(required, [ExecutedCall("f", {"a": 1, "unit": "CM"})], schemas=schema).ok
    missing = check_calls(required, [ExecutedCall("f", {"unit": "cm"})], schemas=schema)
    assert [e.code for e in missing.errors] == [CallErrorCode.MISSING_ARGUMENT]
    # a bool is not an integer; a float parameter accepts an int
    assert (
        check_calls(required, [ExecutedCall("f", {"a": True})], schemas=schema).errors[0].code
        is CallErrorCode.WRONG_TYPE
    )
    floats = [RequiredCall("g", {"x": [2.0]})]
    g_schema = {"g": {"properties": {"x": {"type": "float"}}, "required": ["x"]}}
    assert check_calls(floats, [ExecutedCall("g", {"x": 2})], schemas=g_schema).ok


def test_nested_dict_constraint() -> None:
    required = [RequiredCall("f", {"d": [{"k": ["v", "w"], "opt": ["", 1]}]})]
    assert check_calls(required, [ExecutedCall("f", {"d": {"k": "W"}})]).ok
    bad = check_calls(required, [ExecutedCall("f", {"d": {"k": "v", "zz": 1}})])
    assert bad.errors[0].code is CallErrorCode.WRONG_VALUE
    assert copy.deepcopy(required) == required
