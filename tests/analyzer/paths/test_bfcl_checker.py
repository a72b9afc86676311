"""The BFCL-style call checker on the real BFCL v4 ground truth, plus mutations."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from groundtrace.analyzer.cases import Case, RequiredCall, read_cases
from groundtrace.analyzer.paths._bfcl import check_item, concrete_calls
from groundtrace.analyzer.paths._calls import ExecutedCall, check_calls
from groundtrace.analyzer.paths._types import CallErrorCode
from tests.support.data import DATA


def schemas(item: Case) -> dict[str, dict]:
    return {tool.name: dict(tool.parameters) for tool in item.tools}


def category(item: Case) -> str:
    return item.case_id.rsplit("_", 1)[0]


CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")


@pytest.fixture(scope="module")
def items() -> list[Case]:
    folder = DATA / "agent_tools" / "bfcl_v4"
    return [it for c in CATEGORIES for it in read_cases(folder / f"BFCL_v4_{c}.jsonl")]


def test_ground_truth_scores_all_correct(items: list[Case]) -> None:
    assert Counter(category(it) for it in items) == {
        "simple_python": 400,
        "multiple": 200,
        "parallel": 200,
        "parallel_multiple": 200,
    }
    wrong = {it.case_id: check_item(it, concrete_calls(it)).errors for it in items}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_dropped_call(items: list[Case]) -> None:
    for it in items:
        calls = concrete_calls(it)
        codes = [e.code for e in check_item(it, calls[:-1]).errors]
        assert codes == [CallErrorCode.MISSING_CALL], it.case_id


def _first_scalar_arg(call: ExecutedCall, kinds: tuple[type, ...]) -> str | None:
    return next(
        (k for k, v in call.arguments.items() if isinstance(v, kinds) and not isinstance(v, bool)),
        None,
    )


def test_wrong_value(items: list[Case]) -> None:
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
        assert [e.code for e in errors] == [CallErrorCode.WRONG_VALUE], it.case_id
        assert errors[0].argument == arg
        tested += 1
    assert tested > 600


def test_wrong_type(items: list[Case]) -> None:
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
        assert codes == [CallErrorCode.WRONG_TYPE], it.case_id
        tested += 1
    assert tested > 300


def test_extra_argument(items: list[Case]) -> None:
    for it in items:
        calls = concrete_calls(it)
        args = {**calls[0].arguments, "zz_extra_argument": 1}
        mutated = [ExecutedCall(calls[0].name, args), *calls[1:]]
        errors = check_item(it, mutated).errors
        assert [e.code for e in errors] == [CallErrorCode.UNEXPECTED_ARGUMENT], it.case_id
        assert errors[0].argument == "zz_extra_argument"


def test_swapped_function(items: list[Case]) -> None:
    tested = 0
    for it in items:
        calls = concrete_calls(it)
        names = {c.name for c in it.required_calls}
        # a declared function the item does not call, else an undeclared one
        other = next((n for n in schemas(it) if n not in names), "zz_undeclared_function")
        mutated = [ExecutedCall(other, calls[0].arguments), *calls[1:]]
        codes = [e.code for e in check_item(it, mutated).errors]
        assert codes == [CallErrorCode.WRONG_FUNCTION], it.case_id
        tested += 1
    assert tested == len(items)


def test_parallel_order_is_free_but_can_be_required(items: list[Case]) -> None:
    parallel = [it for it in items if category(it) == "parallel" and len(it.required_calls) > 1]
    for it in parallel:
        calls = concrete_calls(it)
        assert check_item(it, calls[::-1]).ok, it.case_id
    it = next(p for p in parallel if len({str(c.arguments) for c in concrete_calls(p)}) > 1)
    calls = concrete_calls(it)
    ordered = check_calls(it.required_calls, calls[::-1], ordered=True, schemas=schemas(it))
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


def test_float_for_an_integer_parameter_is_a_type_error() -> None:
    # A model that emits ``duration=600.0`` for an ``integer`` parameter is told the type is
    # wrong, as BFCL does, even though 600.0 == 600 numerically.
    required = [RequiredCall("timer", {"duration": [600]})]
    schema = {"timer": {"properties": {"duration": {"type": "integer"}}, "required": ["duration"]}}
    bad = check_calls(required, [ExecutedCall("timer", {"duration": 600.0})], schemas=schema)
    assert [e.code for e in bad.errors] == [CallErrorCode.WRONG_TYPE]
    assert "600.0" in bad.errors[0].message and "'integer'" in bad.errors[0].message
    assert check_calls(required, [ExecutedCall("timer", {"duration": 600})], schemas=schema).ok
    # an int for a float/number parameter stays accepted (BFCL converts it)
    for declared in ("float", "number"):
        g_schema = {"g": {"properties": {"x": {"type": declared}}, "required": ["x"]}}
        floats = [RequiredCall("g", {"x": [600.0]})]
        assert check_calls(floats, [ExecutedCall("g", {"x": 600})], schemas=g_schema).ok
    # the variable rule still holds: a value the ground truth lists with another type
    arrays = [RequiredCall("h", {"x": ["data['sales']"]})]
    h_schema = {"h": {"properties": {"x": {"type": "array"}}, "required": ["x"]}}
    assert check_calls(arrays, [ExecutedCall("h", {"x": "data['sales']"})], schemas=h_schema).ok


def test_nested_dict_constraint() -> None:
    required = [RequiredCall("f", {"d": [{"k": ["v", "w"], "opt": ["", 1]}]})]
    assert check_calls(required, [ExecutedCall("f", {"d": {"k": "W"}})]).ok
    bad = check_calls(required, [ExecutedCall("f", {"d": {"k": "v", "zz": 1}})])
    assert bad.errors[0].code is CallErrorCode.WRONG_VALUE
    assert copy.deepcopy(required) == required
