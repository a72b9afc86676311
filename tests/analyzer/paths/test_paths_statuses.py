"""Every path status on hand-built traces, including the traps of SPEC 4.3."""

from __future__ import annotations

from typing import Any

import pytest

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.cases import Case, RequiredCall, parse_case
from groundtrace.analyzer.paths import CaseVerdict, PathStatus, ToolsConfig
from groundtrace.analyzer.paths._validate import validate_case
from groundtrace.collectors.model import LLMCall, Message, Request, ToolCall, Trace

DOC_X = "/data/products/x.md"
DOC_OTHER = "/data/other.md"
X_TEXT = "The X200 blender has a 1.5 litre jar. It ships with a 2 year warranty."
OTHER_TEXT = "Other products are listed in the catalogue."
TOOLS = ToolsConfig(reads={"read_document": ("path",), "search": ()})


def read(path: str, content: str | None, status: str = "ok", **kw: Any) -> ToolCall:
    return ToolCall(
        span_id=f"s{abs(hash((path, status))) % 10**6}",
        name="read_document",
        arguments={"path": path},
        status=status,
        result_content=content if status == "ok" else None,
        **kw,
    )


def trace(
    *calls: ToolCall,
    answer: str = "1.5 litres",
    cited: tuple[str, ...] = (),
    quotes: tuple[str, ...] = (),
    prompt: str | None = None,
) -> Trace:
    llm = ()
    if prompt is not None:
        llm = (LLMCall(span_id="llm", messages=(Message(role="user", content=prompt),)),)
    return Trace(
        request=Request(trace_id="t" * 32, case_id="c1"),
        answer=answer,
        cited_ids=cited,
        quotes=quotes,
        tool_calls=calls,
        llm_calls=llm,
    )


def case(**fields: Any) -> Case:
    return parse_case({"id": "c1", "reference_answer": "1.5 litres", **fields})


def check(c: Case, t: Trace) -> CaseVerdict:
    return validate_case(c, t, TOOLS)


def test_pass_when_required_read_cited_and_quoted() -> None:
    v = check(
        case(required_reads=[DOC_X]),
        trace(read(DOC_X, X_TEXT), cited=(DOC_X,), quotes=("a 1.5 litre jar",)),
    )
    assert v.status is PathStatus.PASS
    assert v.issues == ()
    assert v.text_correct is True and v.text_em is True
    assert v.cited_read == (DOC_X,) and v.required_cited == (DOC_X,)


def test_citation_seen_only_in_prompt_is_invalid_quote_not_pass() -> None:
    prompt = f"Sources you may use: {DOC_X}, {DOC_OTHER}. Question: jar size?"
    v = check(case(), trace(read(DOC_OTHER, OTHER_TEXT), cited=(DOC_X,), prompt=prompt))
    assert v.status is PathStatus.INVALID_QUOTE
    issue = next(i for i in v.issues if i["status"] == "invalid_quote")
    assert issue["citation"] == DOC_X
    assert issue["seen_in"] == ["a model prompt"]
    assert v.path_pass is False


def test_read_other_file_cite_products_file() -> None:
    v = check(case(), trace(read(DOC_OTHER, OTHER_TEXT), cited=(DOC_X,)))
    assert v.status is PathStatus.INVALID_QUOTE
    assert v.read == (DOC_OTHER,) and v.cited_read == ()
    # the same when x.md is also required: a command and a citation failure at once
    both = check(case(required_reads=[DOC_X]), trace(read(DOC_OTHER, OTHER_TEXT), cited=(DOC_X,)))
    assert both.status is PathStatus.BOTH_FAILED
    assert {i["status"] for i in both.issues} == {"both_failed", "missing_command", "invalid_quote"}


def test_successful_call_with_wrong_arguments_is_param_error() -> None:
    c = case(required_calls=[{"name": "lookup_price", "arguments": {"currency": ["EUR"]}}])
    call = ToolCall(span_id="p", name="lookup_price", arguments={"currency": "USD"}, status="ok")
    v = check(c, trace(call))
    assert v.status is PathStatus.PARAM_ERROR
    assert v.issues[0]["code"] == "wrong_value"
    assert v.call_errors[0].argument == "currency"


def test_require_path_false_never_fails() -> None:
    c = case(require_path=False, required_reads=[DOC_X])
    v = check(c, trace(cited=(DOC_X,), quotes=("made up",)))
    assert v.status is PathStatus.NOT_REQUIRED
    assert v.path_pass is None and v.issues == ()
    assert v.text_correct is True  # the text channel is still scored
    assert {i["status"] for i in v.details["unchecked_issues"]} >= {"zero_call_citation"}


def test_missing_command() -> None:
    v = check(case(required_reads=[DOC_X]), trace())
    assert v.status is PathStatus.MISSING_COMMAND
    c = case(required_calls=[{"name": "lookup_price", "arguments": {}}])
    assert check(c, trace(read(DOC_X, X_TEXT))).status is PathStatus.MISSING_COMMAND


def test_tool_error_and_timeout() -> None:
    failed = read(DOC_X, None, status="error", error_type="FileNotFoundError")
    v = check(case(required_reads=[DOC_X]), trace(failed))
    assert v.status is PathStatus.TOOL_ERROR
    assert "FileNotFoundError" in v.issues[0]["message"]
    slow = read(DOC_X, None, status="timeout", error_type="TimeoutError")
    assert check(case(required_reads=[DOC_X]), trace(slow)).status is PathStatus.TIMEOUT
    # a failed read read nothing: citing it is invalid too
    assert check(case(), trace(failed, cited=(DOC_X,))).status is PathStatus.INVALID_QUOTE


def test_failed_call_with_other_arguments_is_param_error_not_tool_error() -> None:
    # The user is told the agent asked for the wrong currency, not that the required call
    # ran and errored: a failed call counts as the required one only if its arguments fit.
    c = case(required_calls=[{"name": "lookup_price", "arguments": {"currency": ["EUR"]}}])
    usd = ToolCall(
        span_id="u", name="lookup_price", arguments={"currency": "USD"}, status="error",
        error_type="KeyError",
    )  # fmt: skip
    v = check(c, trace(usd))
    assert v.status is PathStatus.PARAM_ERROR
    assert v.issues[0]["code"] == "wrong_value" and v.issues[0]["arguments"] == {"currency": "USD"}
    assert "'USD'" in v.issues[0]["message"] and "error" in v.issues[0]["message"]
    # the same tool called with the required arguments and failing is a tool error
    eur = ToolCall(
        span_id="e", name="lookup_price", arguments={"currency": "EUR"}, status="error",
        error_type="KeyError",
    )  # fmt: skip
    both = check(c, trace(usd, eur))
    assert both.status is PathStatus.TOOL_ERROR
    assert both.issues[0]["call_index"] == 1 and "KeyError" in both.issues[0]["message"]


def test_zero_call_citation() -> None:
    v = check(case(required_reads=[DOC_X]), trace(cited=(DOC_X,), quotes=("1.5 litre jar",)))
    assert v.status is PathStatus.ZERO_CALL_CITATION
    # no citation and no call is a missing command, not a zero-call citation
    assert check(case(required_reads=[DOC_X]), trace()).status is PathStatus.MISSING_COMMAND


def test_fabricated_quote_and_fuzzy_tolerance() -> None:
    made_up = "The X200 blender is dishwasher safe"
    v = check(case(), trace(read(DOC_X, X_TEXT), cited=(DOC_X,), quotes=(made_up,)))
    assert v.status is PathStatus.FABRICATED_QUOTE
    quote = v.details["quotes"][0]
    assert quote["source"] == DOC_X and quote["ratio"] < 0.9
    # case, punctuation, whitespace and one typo are tolerated
    fuzzy = "the X200 blender has a 1.5-litre  jar!"
    ok = check(case(), trace(read(DOC_X, X_TEXT), cited=(DOC_X,), quotes=(fuzzy,)))
    assert ok.status is PathStatus.PASS
    typo = "It ships with a 2 year waranty"
    assert check(case(), trace(read(DOC_X, X_TEXT), quotes=(typo,))).status is PathStatus.PASS


def test_quote_present_only_in_prompt_is_fabricated() -> None:
    prompt = f"Context: {X_TEXT}"
    v = check(
        case(),
        trace(read(DOC_OTHER, OTHER_TEXT), quotes=("a 1.5 litre jar",), prompt=prompt),
    )
    assert v.status is PathStatus.FABRICATED_QUOTE


def test_unused_result() -> None:
    c = case(required_values=["1.5 litre"])
    v = check(c, trace(read(DOC_X, X_TEXT), answer="about two litres", cited=(DOC_X,)))
    assert v.status is PathStatus.UNUSED_RESULT
    assert v.text_correct is False
    assert check(c, trace(read(DOC_X, X_TEXT), answer="a 1.5 litre jar")).status is PathStatus.PASS


def test_required_value_never_stated_is_missing_value() -> None:
    # tau-bench ``outputs`` / a case's ``required_values``: the user never hears the value,
    # so the case fails even though no tool returned it (it used to pass silently).
    c = case(required_values=["2 year"])
    v = check(c, trace(read(DOC_OTHER, OTHER_TEXT), answer="1.5 litres"))
    assert v.status is PathStatus.MISSING_VALUE and v.path_pass is False
    assert v.issues[0]["value"] == "2 year" and "not stated" in v.issues[0]["message"]
    assert v.details["required_values"] == [
        {"value": "2 year", "returned_by": [], "in_answer": False}
    ]
    # stated in the answer: passes whatever the source of the value
    stated = check(c, trace(read(DOC_OTHER, OTHER_TEXT), answer="1.5 litres, 2 year warranty"))
    assert stated.status is PathStatus.PASS
    # returned by a tool and dropped: unused_result names the call, and wins
    dropped = check(case(required_values=["2 year", "10 kg"]), trace(read(DOC_X, X_TEXT)))
    assert {i["status"] for i in dropped.issues} == {"unused_result", "missing_value"}
    assert dropped.status is PathStatus.UNUSED_RESULT


def test_fallback_to_recorded_paths_read_without_tools_config() -> None:
    call = ToolCall(
        span_id="c", name="cat", arguments={"file": DOC_X}, status="ok",
        paths_read=(DOC_X,), result_content=X_TEXT,
    )  # fmt: skip
    v = validate_case(case(required_reads=[DOC_X]), trace(call, cited=(DOC_X,)))
    assert v.status is PathStatus.PASS
    # declared tools are exact: a declared tool reads its path arguments only
    declared = ToolsConfig(reads={"cat": ()})
    assert validate_case(case(required_reads=[DOC_X]), trace(call), declared).status is (
        PathStatus.MISSING_COMMAND
    )


def test_disallowed_command_and_exclusive_tools() -> None:
    rm = ToolCall(span_id="r", name="delete_file", arguments={"path": DOC_X}, status="ok")
    c = case(allowed_commands=["read_document"])
    v = check(c, trace(read(DOC_X, X_TEXT), rm))
    assert v.status is PathStatus.PARAM_ERROR
    assert v.call_errors[0].code.value == "disallowed_command"
    book = ToolCall(span_id="b", name="book", arguments={"seat": "1A"}, status="ok")
    ex = case(exclusive_tools=["book"])
    assert check(ex, trace(book)).call_errors[0].code.value == "unexpected_call"


def test_a_refused_call_is_a_call_error_and_a_parameter_issue() -> None:
    """An exclusive tool's unrequired call (with or without required calls) and a command not
    allowed: each is a call error and a param_error issue naming the call."""
    book = ToolCall(span_id="b", name="book", arguments={"seat": "1A"}, status="ok")
    required = [RequiredCall(name="book", arguments={"seat": ["2B"]})]
    cases = {
        "exclusive": case(exclusive_tools=["book"]),
        "exclusive_required": case(exclusive_tools=["book"], required_calls=required),
        "allowed": case(allowed_commands=["read_document"]),
    }
    found = {name: check(c, trace(book)) for name, c in cases.items()}
    assert {n: [(e.code.value, e.message, e.executed_index) for e in v.call_errors]
            for n, v in found.items()} == {
        "exclusive": [("unexpected_call", "book ran, but the case requires no such call", 0)],
        "exclusive_required": [
            ("wrong_value", "book: argument 'seat' = '1A' is not among ['2B']", 0),
            ("unexpected_call", "book ran with arguments no required call accepts", 0),
        ],
        "allowed": [("disallowed_command", "book is not among the allowed commands", 0)],
    }  # fmt: skip
    last = {name: v.issues[-1] for name, v in found.items()}
    assert last == {
        "exclusive": {"status": "param_error", "message": "book ran, but the case requires no "
                      "such call", "code": "unexpected_call", "call_index": 0,
                      "arguments": {"seat": "1A"}},
        "exclusive_required": {"status": "param_error", "message": "book ran with arguments no "
                               "required call accepts", "code": "unexpected_call",
                               "call_index": 0, "arguments": {"seat": "1A"}},
        "allowed": {"status": "param_error", "message": "book is not among the allowed commands",
                    "code": "disallowed_command", "call_index": 0},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ({"timeout", "missing_command"}, PathStatus.TIMEOUT),
        ({"fabricated_quote", "unused_result"}, PathStatus.FABRICATED_QUOTE),
    ],
)
def test_most_specific_status_wins(statuses: set[str], expected: PathStatus) -> None:
    calls: list[ToolCall] = []
    reads: list[str] = []
    quotes: tuple[str, ...] = ()
    values: list[str] = []
    if "timeout" in statuses:
        calls.append(read(DOC_X, None, status="timeout"))
        reads.append(DOC_X)
    if "missing_command" in statuses:
        reads.append(DOC_OTHER)
    if "fabricated_quote" in statuses:
        calls.append(read(DOC_X, X_TEXT))
        quotes = ("not in the text at all",)
    if "unused_result" in statuses:
        values.append("2 year")
    v = check(case(required_reads=reads, required_values=values), trace(*calls, quotes=quotes))
    assert {i["status"] for i in v.issues} == statuses
    assert v.status is expected


def test_required_call_order() -> None:
    calls = [
        ToolCall(span_id="a", name="b", arguments={}, status="ok"),
        ToolCall(span_id="b", name="a", arguments={}, status="ok"),
    ]
    required = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]
    assert check(case(required_calls=required), trace(*calls)).status is PathStatus.PASS
    ordered = check(case(required_calls=required, ordered=True), trace(*calls))
    assert ordered.status is PathStatus.MISSING_COMMAND
    assert ordered.call_errors[0].code.value == "wrong_order"


def test_case_verdict_json_has_both_channels() -> None:
    v = check(case(), trace(read(DOC_X, X_TEXT), cited=(DOC_X,)))
    data = to_builtins(v)
    assert data["id"] == v.case_id
    assert data["status"] == "pass" and data["text_score"] == 1.0
    assert data["read"] == [DOC_X]
    assert to_builtins(RequiredCall("f", {"a": [1]})) == {"name": "f", "arguments": {"a": [1]}}
