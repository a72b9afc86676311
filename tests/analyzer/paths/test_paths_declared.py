"""A case that declares its expected path is checked, even when that path is empty.

tau-bench: a task whose ground-truth actions are none, or reads only, requires no write; a
run that rightly wrote nothing (and here called no tool at all) passes. Before, such a run
was ``not_applicable`` (4 of 160 held-out runs), as if the case declared no path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.analyzer.cases import parse_case, read_cases
from groundtrace.analyzer.paths import PathStatus
from groundtrace.analyzer.paths._tau import tau_bench_cases
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.model import Request, ToolCall, Trace
from tests.analyzer.paths.checking import validate

SETTINGS = StatsSettings(n_resamples=100, seed=3)


def tau_row(task_id: int, actions: list[dict[str, object]]) -> dict[str, object]:
    task = {"instruction": "Help me with my booking.", "actions": actions, "outputs": []}
    return {"task_id": task_id, "trial": 0, "reward": 1.0, "info": {"task": task}}


def silent(i: int, case_id: str) -> Trace:
    """A run that answered without calling any tool."""
    request = Request(trace_id=f"{i + 1:032x}", case_id=case_id, query="q")
    return Trace(request=request, answer="I cannot change that reservation.")


READ = {"name": "get_reservation_details", "kwargs": {"reservation_id": "ZFA04Y"}}
WRITE = {"name": "cancel_reservation", "kwargs": {"reservation_id": "ZFA04Y"}}


@pytest.mark.timeout(60)
def test_tau_bench_tasks_with_no_writes_pass_a_run_without_calls(tmp_path: Path) -> None:
    source = tmp_path / "results.jsonl"
    rows = [tau_row(1, []), tau_row(2, [READ]), tau_row(3, [READ, WRITE])]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cases = list(tau_bench_cases(source))
    traces = [silent(i, c.case_id) for i, c in enumerate(cases)]
    report = validate(traces, cases, settings=SETTINGS)
    statuses = {v.case_id: v.status for v in report.verdicts}
    assert statuses == {
        "1:0": PathStatus.PASS,
        "2:0": PathStatus.PASS,
        "3:0": PathStatus.MISSING_COMMAND,  # unchanged: a required write never ran
    }
    assert report.not_applicable == 0
    assert report.metrics.path_pass_rate.n == 3


@pytest.mark.timeout(60)
def test_a_tau2_task_without_actions_declares_no_path(tmp_path: Path) -> None:
    source = tmp_path / "tasks.json"
    tasks = [
        {"id": "t-none", "evaluation_criteria": {"communicate_info": []}},
        {"id": "t-empty", "evaluation_criteria": {"actions": []}},
    ]
    source.write_text(json.dumps(tasks), encoding="utf-8")
    cases = list(tau_bench_cases(source))
    report = validate([silent(0, "t-none"), silent(1, "t-empty")], cases, settings=SETTINGS)
    statuses = {v.case_id: v.status for v in report.verdicts}
    assert statuses == {"t-none": PathStatus.NOT_APPLICABLE, "t-empty": PathStatus.PASS}


@pytest.mark.parametrize(
    ("row", "status"),
    [
        ({"id": "c", "required_calls": []}, PathStatus.PASS),
        ({"id": "c", "required_reads": []}, PathStatus.PASS),
        ({"id": "c", "allowed_commands": []}, PathStatus.PASS),
        ({"id": "c", "exclusive_tools": ["book"]}, PathStatus.PASS),
        ({"id": "c", "required_values": []}, PathStatus.PASS),
        ({"id": "c", "declares_path": True}, PathStatus.PASS),
        ({"id": "c"}, PathStatus.NOT_APPLICABLE),
        ({"id": "c", "answer": "no", "required_calls": [], "require_path": False},
         PathStatus.NOT_REQUIRED),
        ({"id": "c", "required_calls": [{"name": "book"}]}, PathStatus.MISSING_COMMAND),
    ],
)  # fmt: skip
@pytest.mark.timeout(60)
def test_native_rows_declare_a_path_by_naming_one(row: dict[str, object], status: str) -> None:
    (verdict,) = validate([silent(0, "c")], [parse_case(row)], settings=SETTINGS).verdicts
    assert verdict.status is status


@pytest.mark.timeout(60)
def test_a_declared_empty_path_still_fails_a_disallowed_call(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "c", "allowed_commands": []}) + "\n", encoding="utf-8")
    (case,) = read_cases(path)
    assert case.declares_path is True
    call = ToolCall(span_id="t", name="delete_all", status="ok")
    trace = Trace(request=silent(0, "c").request, answer="done", tool_calls=(call,))
    (verdict,) = validate([trace], [case], settings=SETTINGS).verdicts
    assert verdict.status is PathStatus.PARAM_ERROR
    assert verdict.call_errors[0].code.value == "disallowed_command"
