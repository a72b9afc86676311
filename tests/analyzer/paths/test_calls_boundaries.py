"""The call checker at its boundaries: each comparison from both sides, each branch that fails.

Written against the mutants a regression could make in ``paths/_calls.py`` (measured with a
mutation tool): one executed call satisfying two required calls in ordered mode, a correctly
ordered case flagged as out of order, a greedy instead of a maximum matching, ``True`` read
as ``1``, a type or optional-argument rule loosened or tightened.
"""

from __future__ import annotations

from typing import Any

import pytest

from groundtrace.analyzer.cases import RequiredCall
from groundtrace.analyzer.paths._calls import (
    ExecutedCall,
    check_calls,
    diagnose_call,
    standardise_string,
    value_matches,
)
from groundtrace.analyzer.paths._types import CallErrorCode

pytestmark = pytest.mark.timeout(60)


def req(name: str, **arguments: list[Any]) -> RequiredCall:
    return RequiredCall(name, dict(arguments))


def ran(name: str, **arguments: Any) -> ExecutedCall:
    return ExecutedCall(name, arguments)


def codes(match: Any) -> list[tuple[CallErrorCode, int | None, int | None]]:
    return [(e.code, e.required_index, e.executed_index) for e in match.errors]


# --- ordered mode ---------------------------------------------------------------------------


def test_a_correctly_ordered_case_is_not_flagged() -> None:
    required = [req("search", q=["kiln"]), req("read", path=["a.md"])]
    match = check_calls(required, [ran("search", q="kiln"), ran("read", path="a.md")], ordered=True)
    assert match.ok and match.pairs == {0: 0, 1: 1}
    # extra calls in between and before are allowed
    executed = [ran("noise"), ran("search", q="kiln"), ran("noise"), ran("read", path="a.md")]
    assert check_calls(required, executed, ordered=True).pairs == {0: 1, 1: 3}


def test_one_call_cannot_satisfy_two_required_calls_in_order() -> None:
    required = [req("book", slot=["9:00"]), req("book", slot=["9:00"])]
    match = check_calls(required, [ran("book", slot="9:00")], ordered=True)
    assert match.pairs == {0: 0}
    assert codes(match) == [(CallErrorCode.MISSING_CALL, 1, None)]
    twice = check_calls(required, [ran("book", slot="9:00")] * 2, ordered=True)
    assert twice.ok and twice.pairs == {0: 0, 1: 1}


def test_calls_out_of_order_are_flagged_with_their_indices() -> None:
    required = [req("check_slots"), req("book")]
    match = check_calls(required, [ran("book"), ran("check_slots")], ordered=True)
    assert match.pairs == {0: 1, 1: 0}
    assert codes(match) == [(CallErrorCode.WRONG_ORDER, 1, 0)]
    assert not check_calls(required, [ran("book"), ran("check_slots")]).errors  # unordered: fine
    # the call named is the first one that fits, not the first one unused
    later = check_calls(required, [ran("noise"), ran("book"), ran("check_slots")], ordered=True)
    assert codes(later) == [(CallErrorCode.WRONG_ORDER, 1, 1)]


def test_ordered_match_resumes_after_the_previous_match() -> None:
    # the second required call matches only at index 2, after the first's match at 1
    required = [req("f", x=[1]), req("f", x=[1, 2])]
    executed = [ran("f", x=2), ran("f", x=1), ran("f", x=2)]
    match = check_calls(required, executed, ordered=True)
    assert match.ok and match.pairs == {0: 1, 1: 2}


def test_ordered_candidates_limit_the_matches() -> None:
    required = [req("read", path=["a.md"])]
    executed = [ran("read", path="a.md"), ran("read", path="a.md")]
    match = check_calls(required, executed, ordered=True, candidates=[1])
    assert match.ok and match.pairs == {0: 1}
    none = check_calls(required, executed, ordered=True, candidates=[])
    assert not none.ok and none.pairs == {}


# --- unordered mode -------------------------------------------------------------------------


def test_unordered_matching_is_maximal_not_greedy() -> None:
    # greedy would give the first call to the first requirement and leave the second unmatched
    required = [req("f", x=[1, 2]), req("f", x=[1])]
    match = check_calls(required, [ran("f", x=1), ran("f", x=2)])
    assert match.ok and match.pairs == {0: 1, 1: 0}


def test_unordered_one_call_satisfies_one_requirement() -> None:
    required = [req("f", x=[1]), req("f", x=[1])]
    match = check_calls(required, [ran("f", x=1)])
    assert len(match.pairs) == 1
    assert codes(match) == [(CallErrorCode.MISSING_CALL, 1, None)]


def test_a_wrong_value_is_diagnosed_on_the_same_function() -> None:
    match = check_calls([req("f", x=[1, ""])], [ran("g"), ran("f", x=3)])
    assert codes(match) == [(CallErrorCode.WRONG_VALUE, 0, 1)]
    assert match.errors[0].argument == "x"
    assert match.errors[0].message == "f: argument 'x' = 3 is not among [1]"


def test_a_call_never_made_is_missing() -> None:
    match = check_calls([req("f")], [ran("g")])
    assert codes(match) == [(CallErrorCode.MISSING_CALL, 0, None)]
    assert "never ran" in match.errors[0].message


# --- strict mode ----------------------------------------------------------------------------


def test_strict_refuses_an_extra_call_lenient_allows_it() -> None:
    required = [req("f", x=[1])]
    executed = [ran("f", x=1), ran("g")]
    assert check_calls(required, executed).ok
    assert codes(check_calls(required, executed, strict=True)) == [
        (CallErrorCode.UNEXPECTED_CALL, None, 1)
    ]


def test_strict_names_the_wrong_function_once() -> None:
    match = check_calls([req("f")], [ran("g")], strict=True)
    assert codes(match) == [(CallErrorCode.WRONG_FUNCTION, 0, 0)]


def test_strict_names_each_wrong_function() -> None:
    match = check_calls([req("f"), req("h")], [ran("g"), ran("k")], strict=True)
    assert codes(match) == [
        (CallErrorCode.WRONG_FUNCTION, 0, 0),
        (CallErrorCode.WRONG_FUNCTION, 1, 1),
    ]


def test_strict_counts_a_misfit_call_of_the_required_function_once() -> None:
    match = check_calls([req("f", x=[1])], [ran("f", x=2)], strict=True)
    assert codes(match) == [(CallErrorCode.WRONG_VALUE, 0, 0)]  # not also unexpected


def test_strict_with_two_misfits_uses_each_call_once() -> None:
    match = check_calls([req("f", x=[1]), req("f", x=[2])], [ran("f", x=3)], strict=True)
    assert [e.code for e in match.errors] == [CallErrorCode.WRONG_VALUE, CallErrorCode.MISSING_CALL]


# --- one call against its requirement --------------------------------------------------------


def test_arguments_present_missing_optional_and_unknown() -> None:
    required = req("f", x=[1], unit=["C", ""])
    assert diagnose_call(required, ran("f", x=1)) is None  # optional argument left out
    assert diagnose_call(required, ran("f", x=1, unit="C")) is None
    missing = diagnose_call(required, ran("f", unit="C"), required_index=3, executed_index=4)
    assert missing is not None and missing.code is CallErrorCode.MISSING_ARGUMENT
    assert (missing.argument, missing.required_index, missing.executed_index) == ("x", 3, 4)
    # a string-valued argument without "" among its values is not optional
    city = diagnose_call(req("f", city=["Paris"]), ran("f"))
    assert city is not None and city.code is CallErrorCode.MISSING_ARGUMENT
    extra = diagnose_call(required, ran("f", x=1, y=2))
    assert extra is not None and extra.code is CallErrorCode.UNEXPECTED_ARGUMENT


def test_the_schema_decides_required_and_known_arguments() -> None:
    schema = {"properties": {"x": {"type": "integer"}, "unit": {"type": "string"}},
              "required": ["x", "unit"]}  # fmt: skip
    required = req("f", x=[1], unit=["C", ""])
    # "" marks unit optional in the ground truth, but the schema requires it
    error = diagnose_call(required, ran("f", x=1), schema)
    assert error is not None and error.code is CallErrorCode.MISSING_ARGUMENT
    assert error.argument == "unit"
    assert diagnose_call(required, ran("f", x=1, unit="C"), schema) is None
    # an argument the ground truth lists but the schema does not declare is unknown
    loose = req("f", x=[1], unit=["C", ""], z=[0, ""])
    unknown = diagnose_call(loose, ran("f", x=1, unit="C", z=0), schema)
    assert unknown is not None and unknown.code is CallErrorCode.UNEXPECTED_ARGUMENT
    # a schema-required argument the ground truth does not list is missing too
    bare = diagnose_call(req("f", x=[1]), ran("f", x=1), {"properties": {"x": {}, "k": {}},
                                                           "required": ["k"]})  # fmt: skip
    assert bare is not None and bare.code is CallErrorCode.MISSING_ARGUMENT and bare.argument == "k"


@pytest.mark.parametrize(
    ("declared", "wanted", "value", "ok"),
    [
        ("integer", 600, 600, True),
        ("integer", 600, 600.0, False),
        ("integer", 1, True, False),
        ("float", 2.0, 2, True),
        ("number", 2.5, 2.5, True),
        ("float", 2.5, "2.5", False),
        ("boolean", True, True, True),
        ("boolean", True, 1, False),
        ("string", "1", "1", True),
        ("string", "1", 1, False),
        ("array", [1, 2], [1, 2], True),
        ("tuple", [1, 2], (1, 2), True),
        ("dict", {"a": [1]}, {"a": 1}, True),
        ("object", {"a": [1]}, [1], False),
        ("any", "x", "x", True),
    ],
)
def test_declared_types(declared: str, wanted: Any, value: Any, ok: bool) -> None:
    """The ground truth lists a value of the declared type: no "variable" licence."""
    schema = {"properties": {"v": {"type": declared}}}
    error = diagnose_call(req("f", v=[wanted]), ran("f", v=value), schema)
    assert (error is None) is ok
    if not ok:
        assert error is not None and error.code is CallErrorCode.WRONG_TYPE


def test_array_items_are_type_checked() -> None:
    schema = {"properties": {"v": {"type": "array", "items": {"type": "integer"}}}}
    assert diagnose_call(req("f", v=[[1, 2]]), ran("f", v=[1, 2]), schema) is None
    error = diagnose_call(req("f", v=[[1, 2]]), ran("f", v=[1, "2"]), schema)
    assert error is not None and error.code is CallErrorCode.WRONG_TYPE


def test_a_ground_truth_value_of_another_type_is_a_variable_not_a_type_error() -> None:
    schema = {"properties": {"x": {"type": "array"}}}
    required = req("f", x=["data['sales']"])
    assert diagnose_call(required, ran("f", x="data['sales']"), schema) is None
    other = diagnose_call(required, ran("f", x="data['cost']"), schema)
    assert other is not None and other.code is CallErrorCode.WRONG_TYPE


# --- values ---------------------------------------------------------------------------------


def test_scalars_compare_as_bfcl_does() -> None:
    assert value_matches(1, [1.0]) and value_matches(1.0, [1])
    assert not value_matches(True, [1]) and not value_matches(1, [True])
    assert value_matches(False, [False]) and not value_matches(False, [True])
    assert not value_matches(2, [1]) and not value_matches(1, ["1"])
    assert value_matches("New York, NY", ["new_york ny"])
    assert value_matches("it's", ['it"s']) and not value_matches("its", ["it's"])
    assert standardise_string(" A,b./c-d_e*f^G ") == "abcdefg"
    assert not value_matches("", [""]) and not value_matches(None, [""])  # "" marks optional
    assert value_matches(None, [None, ""])


def test_lists_compare_element_wise_and_by_length() -> None:
    assert value_matches([1, "a b"], [[1, "ab"]])
    assert not value_matches([1], [[1, 2]]) and not value_matches([1, 2], [[1]])
    assert not value_matches([2, 1], [[1, 2]])
    assert not value_matches("12", [[1, 2]])


def test_dict_constraints_check_each_key() -> None:
    constraint = {"city": ["Paris"], "unit": ["C", ""], "day": "mon"}
    assert value_matches({"city": "paris", "day": "mon"}, [constraint])  # optional key left out
    assert value_matches({"city": "paris", "unit": "C", "day": "mon"}, [constraint])
    assert not value_matches({"city": "paris"}, [constraint])  # a required key missing
    assert not value_matches({"day": "mon"}, [constraint])
    assert not value_matches({"city": "Rome", "day": "mon"}, [constraint])
    assert not value_matches({"city": "paris", "day": "mon", "x": 1}, [constraint])
    assert not value_matches(["city"], [constraint])
