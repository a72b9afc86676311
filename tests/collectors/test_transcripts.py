"""Transcripts -> τ, on the real tau-bench gpt-4o airline trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.collectors import ReadReport, TraceReadError
from groundtrace.collectors.transcripts import read_transcripts, transcript_to_trace
from tests.support.data import DATA

TAU = DATA / "agent_tools/tau_bench_traces/gpt-4o-airline_dev_40.jsonl"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with open(TAU, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_all_forty_trajectories_convert_with_matching_tool_counts(rows: list[dict]) -> None:
    report = ReadReport()
    traces = list(read_transcripts([TAU], report=report))
    assert report.ok and len(traces) == 40 == len(rows)
    assert len({t.trace_id for t in traces}) == 40
    for row, trace in zip(rows, traces, strict=True):
        traj = row["traj"]
        requested = [c for m in traj if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        results = [m for m in traj if m["role"] == "tool"]
        assert len(trace.tool_calls) == len(requested) == len(results)
        assert [c.name for c in trace.tool_calls] == [c["function"]["name"] for c in requested]
        assert [c.result_content for c in trace.tool_calls] == [m["content"] for m in results]
        errors = [m["content"].startswith("Error") for m in results]
        assert [c.status == "error" for c in trace.tool_calls] == errors
        assert len(trace.llm_calls) == sum(m["role"] == "assistant" for m in traj)
        assert trace.request.case_id == f"{row['task_id']}:{row['trial']}"
        assert trace.request.query == next(m["content"] for m in traj if m["role"] == "user")
        kinds = {f.kind for f in trace.findings}
        assert {"no_confidence", "no_retrieval", "no_timing"} <= kinds
        assert trace.confidence is None and trace.evidence == ()
    assert sum(c.status == "error" for t in traces for c in t.tool_calls) == 24


def test_first_trajectory_in_detail(rows: list[dict]) -> None:
    trace = transcript_to_trace(rows[0]["traj"], case_id="0:0", source="tau")
    first = trace.tool_calls[0]
    assert first.name == "get_user_details"
    assert first.arguments == {"user_id": "mia_li_3668"}
    assert first.call_id == "call_oIHazX6yQrB8hUwl4cRilFKj"
    # the same call id is reused later for `calculate`: results are matched per turn
    calc = trace.tool_calls[3]
    assert calc.call_id == first.call_id and calc.name == "calculate"
    assert calc.result_content == "255.0"
    booking = trace.tool_calls[4]
    assert booking.status == "error" and booking.result_content.startswith("Error: payment")
    final = [m for m in rows[0]["traj"] if m["role"] == "assistant" and m.get("content")][-1]
    assert trace.answer == final["content"]
    # the LLM step that requested the first tool saw every earlier message
    llm = next(c for c in trace.llm_calls if c.tool_calls)
    assert llm.tool_calls[0].name == "get_user_details"
    assert [m.role for m in llm.messages][:2] == ["system", "user"]
    assert trace.to_json() == type(trace).from_json(trace.to_json()).to_json()


def test_missing_tool_result_and_bad_arguments_are_findings() -> None:
    trace = transcript_to_trace(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{x"}},
                ],
            },
            {"role": "assistant", "content": "done"},
        ]
    )
    (call,) = trace.tool_calls
    assert call.arguments is None and call.arguments_raw == "{x" and call.status is None
    assert trace.findings_of("no_tool_result") and trace.findings_of("bad_attribute_type")
    assert trace.answer == "done"


def test_bad_rows_are_reported_with_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = {"task_id": 1, "traj": [{"role": "user", "content": "q"}]}
    path.write_text(json.dumps(good) + "\n{bad\n" + json.dumps({"x": 1}) + "\n")
    report = ReadReport()
    traces = list(read_transcripts([path], report=report))
    assert len(traces) == 1
    assert [e.line for e in report.errors] == [2, 3]
    with pytest.raises(TraceReadError):
        list(read_transcripts([path]))


def test_json_array_file(tmp_path: Path, rows: list[dict]) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rows[:3]))
    assert len(list(read_transcripts([path]))) == 3
