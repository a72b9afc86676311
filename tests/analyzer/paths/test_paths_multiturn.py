"""Command paths checked turn by turn: BFCL multi-turn cases and tau2 conversations.

A conversation is what the SDK writes (one trace per ``@gt.request`` call, the turns sharing
its ``session_id`` as conversation id) or one trace holding every turn (REQUEST spans per
turn, or a transcript). The domain is a greenhouse controller the repository has no other
data of.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from groundtrace.analyzer.cases import parse_case
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.paths import PathStatus
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.model import LLMCall, Message, Request, Step, ToolCall, Trace
from groundtrace.sdk import semconv as sc
from tests.analyzer.paths.checking import validate

SETTINGS = StatsSettings(n_resamples=200, seed=3)
CASE = {
    "id": "greenhouse-1",
    "turns": [
        {"question": "Open the vents to 40%",
         "required_calls": [{"name": "set_vent", "arguments": {"percent": [40]}}]},
        {"question": "Say hello"},  # nothing required: not checked, as BFCL's empty turns
        {"question": "Water bed 3 for 5 minutes",
         "required_calls": [{"name": "water", "arguments": {"bed": [3], "minutes": [5]}}]},
    ],
}  # fmt: skip


def call(name: str, span: str = "", **arguments: Any) -> ToolCall:
    return ToolCall(span_id=span or name, name=name, arguments=arguments, status="ok")


def turn_trace(i: int, start: int, *calls: ToolCall, session: str | None = "s1") -> Trace:
    root = Step(span_id=f"r{i}", parent_span_id=None, action="REQUEST", name="turn",
                start_ns=start, end_ns=start + 1)  # fmt: skip
    return Trace(
        request=Request(trace_id=f"{i + 1:032x}", case_id="greenhouse-1", session_id=session),
        steps=(root,),
        answer=f"done {i}",
        tool_calls=calls,
    )


def check(*traces: Trace, case: dict[str, Any] = CASE) -> Any:
    report = validate(list(traces), [parse_case(case)], settings=SETTINGS)
    (verdict,) = report.verdicts
    return verdict


def test_turn_traces_of_one_conversation_pass_turn_by_turn() -> None:
    # arrival order is not turn order: the root spans' starts are
    v = check(
        turn_trace(2, 300, call("water", bed=3, minutes=5)),
        turn_trace(0, 100, call("set_vent", percent=40)),
        turn_trace(1, 200),
    )
    assert v.status is PathStatus.PASS
    assert [t["status"] for t in v.details["turns"]] == ["pass", "not_applicable", "pass"]
    assert [t["trace_id"] for t in v.details["turns"]] == [f"{i:032x}" for i in (1, 2, 3)]
    assert v.details["failed_turns"] == []


def test_the_failed_turn_is_named() -> None:
    v = check(
        turn_trace(0, 100, call("set_vent", percent=40)),
        turn_trace(1, 200),
        turn_trace(2, 300, call("water", bed=3, minutes=9)),
    )
    assert v.status is PathStatus.PARAM_ERROR and v.path_pass is False
    assert v.details["failed_turns"] == [2]
    assert v.issues[0]["turn"] == 2 and v.issues[0]["message"].startswith("turn 2: ")
    assert "minutes" in v.issues[0]["message"]
    # a call made in the wrong turn does not count for the turn that requires it
    late = check(turn_trace(0, 100), turn_trace(1, 200, call("set_vent", percent=40)),
                 turn_trace(2, 300, call("water", bed=3, minutes=5)))  # fmt: skip
    assert late.status is PathStatus.MISSING_COMMAND and late.details["failed_turns"] == [0]


def test_a_turn_the_conversation_never_reached_fails() -> None:
    v = check(turn_trace(0, 100, call("set_vent", percent=40)))
    assert v.status is PathStatus.MISSING_COMMAND
    assert v.details["failed_turns"] == [2]
    assert "turn 2 never ran: the conversation has 1 turn(s)" in v.issues[0]["message"]


def test_two_conversations_of_one_case_are_two_runs() -> None:
    runs = [
        turn_trace(0, 100, call("set_vent", percent=40), session="a"),
        turn_trace(1, 200, session="a"),
        turn_trace(2, 300, call("water", bed=3, minutes=5), session="a"),
        turn_trace(3, 100, call("set_vent", percent=10), session="b"),
    ]
    report = validate(runs, [parse_case(CASE)], settings=SETTINGS)
    assert [v.status.value for v in report.verdicts] == ["pass", "param_error"]
    assert report.metrics.path_pass_rate.numerator == 1


def test_one_trace_with_a_request_span_per_turn() -> None:
    steps = [Step(span_id="root", parent_span_id=None, action="AGENT", name="chat",
                  start_ns=0, end_ns=9)]  # fmt: skip
    calls = [call("set_vent", "c0", percent=40), call("water", "c2", bed=3, minutes=5)]
    for turn, tool in ((0, "c0"), (1, None), (2, "c2")):
        steps.append(Step(span_id=f"q{turn}", parent_span_id="root", action="REQUEST",
                          name="turn", start_ns=turn + 1, end_ns=turn + 2))  # fmt: skip
        if tool:
            steps.append(Step(span_id=tool, parent_span_id=f"q{turn}", action="TOOL",
                              name=tool, start_ns=turn + 1, end_ns=turn + 2))  # fmt: skip
    trace = Trace(
        request=Request(trace_id="f" * 32, case_id="greenhouse-1"),
        steps=tuple(steps),
        tool_calls=tuple(calls),
    )
    v = check(trace)
    assert v.status is PathStatus.PASS
    assert [t["status"] for t in v.details["turns"]] == ["pass", "not_applicable", "pass"]


def _transcript(*turns: tuple[str, ToolCall | None]) -> Trace:
    """A transcript trace (as the transcripts reader builds it): each tool step under the
    model call that asked for it, whose input holds the user messages seen so far."""
    steps = [Step(span_id="root", parent_span_id=None, action=sc.Action.REQUEST.value,
                  name="transcript", start_ns=0, end_ns=0)]  # fmt: skip
    llm, calls, seen = [], [], []
    for i, (user, tool) in enumerate(turns):
        seen.append(Message(role="user", content=user))
        llm.append(LLMCall(span_id=f"m{i}", messages=tuple(seen)))
        steps.append(Step(span_id=f"m{i}", parent_span_id="root", action="LLM", name="turn",
                          start_ns=0, end_ns=0))  # fmt: skip
        if tool is not None:
            calls.append(tool)
            steps.append(Step(span_id=tool.span_id, parent_span_id=f"m{i}", action="TOOL",
                              name=tool.name or "", start_ns=0, end_ns=0))  # fmt: skip
    return Trace(
        request=Request(trace_id="e" * 32, case_id="task-7"),
        steps=tuple(steps),
        llm_calls=tuple(llm),
        tool_calls=tuple(calls),
        answer="Your reservation is cancelled.",
    )


TAU2_TASK = {
    "id": "task-7",
    "user_scenario": {"instructions": {"reason_for_call": "cancel a reservation"}},
    "evaluation_criteria": {"actions": [
        {"action_id": "7_0", "name": "cancel_reservation",
         "arguments": {"reservation_id": "EHGLP3"}}]},
}  # fmt: skip


def test_a_tau2_conversation_names_the_turn_of_a_wrong_write() -> None:
    trace = _transcript(
        ("Hi, I want to cancel a booking", call("get_user_details", "t0", user_id="u1")),
        ("It is EHGLP3", None),
        ("Yes, cancel it", call("cancel_reservation", "t2", reservation_id="EHGLP4")),
    )
    v = check(trace, case=TAU2_TASK)
    assert v.status is PathStatus.PARAM_ERROR
    assert v.issues[0]["turn"] == 2 and v.issues[0]["message"].startswith("turn 2: ")
    assert v.details["turn_of_call"] == [0, 2]


def test_a_tau2_conversation_of_several_traces_is_one_run() -> None:
    a = turn_trace(0, 100, call("get_user_details", user_id="u1"), session="conv-9")
    b = turn_trace(1, 200, call("cancel_reservation", reservation_id="EHGLP3"), session="conv-9")
    task = {**TAU2_TASK, "id": "greenhouse-1"}  # the traces' case id
    v = check(b, a, case=task)
    assert v.status is PathStatus.PASS
    assert v.details["conversation"] == [a.trace_id, b.trace_id]
    # before, each trace was checked alone against every write: the first one failed


def test_cli_shows_which_turn_failed(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    rows = [
        turn_trace(0, 100, call("set_vent", percent=40)),
        turn_trace(1, 200),
        turn_trace(2, 300, call("water", bed=3, minutes=9)),
    ]
    traces.write_text("".join(t.to_json() + "\n" for t in rows), encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        build_app(),
        ["paths", str(traces), "--cases", str(cases), "--out", str(tmp_path / "p"),
         "--resamples", "200", "--fail-on-failure"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    # the issue's message is user text: a code span in the Markdown summary
    assert "param_error: `turn 2: water: argument 'minutes'" in " ".join(result.output.split())
    report = json.loads((tmp_path / "p" / "report.json").read_text())
    (case,) = report["cases"]
    assert case["details"]["failed_turns"] == [2]
    assert [t["status"] for t in case["details"]["turns"]] == [
        "pass", "not_applicable", "param_error",
    ]  # fmt: skip
