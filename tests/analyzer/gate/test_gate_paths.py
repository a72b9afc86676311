"""The gate's command-path layer: a declared path that fails is a failed check.

The data is a village library's loan desk (a domain the repository holds nowhere else): an
agent written here and traced with the SDK, with three tools. The baseline checks that a
book is on the shelf, then lends it to the member who asked. The candidate answers with the
same words but lends without checking the shelf (``skip_check``) and lends to the wrong
member (``wrong_member``): a regression only the command path shows.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import groundtrace.analyzer.gate as gate
import groundtrace.sdk as gt
from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.gate._path_layer import PathVerdict, path_checks
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

#: book id -> (title, copies on the shelf)
SHELF: dict[str, tuple[str, int]] = {"bk-1": ("The Salt Road", 2), "bk-2": ("Moss and Iron", 1)}

#: case id -> (member, book id, the member's request)
LOANS: dict[str, tuple[str, str, str]] = {
    "loan-a": ("m-11", "bk-1", "Member m-11 would like to borrow The Salt Road."),
    "loan-b": ("m-12", "bk-2", "Member m-12 would like to borrow Moss and Iron."),
    "loan-c": ("m-13", "bk-1", "Member m-13 would like to borrow The Salt Road."),
}

app = build_app()


def _desk(out: Path, faults: dict[str, str]) -> None:
    """The loan desk agent traced by the SDK; ``faults`` maps a case id to its fault."""
    gt.configure(service_name="loan-desk", exporter=OTLPJsonFileExporter(out),
                 capture_content=True, redact=False)  # fmt: skip

    @gt.tool(name="find_book")
    def find_book(title: str) -> str:
        return next(k for k, (t, _) in SHELF.items() if t == title)

    @gt.tool(name="check_shelf")
    def check_shelf(book_id: str) -> int:
        return SHELF[book_id][1]

    @gt.tool(name="lend")
    def lend(book_id: str, member: str) -> str:
        return f"loan {book_id}/{member}"

    @gt.answer
    def reply(question: str, text: str) -> dict[str, Any]:
        return {"answer": text}

    @gt.request(app_name="loan-desk")
    def ask(question: str, case_id: str) -> object:
        member, book, _ = LOANS[case_id]
        book_id = find_book(SHELF[book][0])
        if faults.get(case_id) != "skip_check":
            check_shelf(book_id)
        lend(book_id, "m-99" if faults.get(case_id) == "wrong_member" else member)
        return reply(question, f"{SHELF[book][0]} is lent to {member}.")

    for case_id, (_, _, question) in LOANS.items():
        ask(question, case_id=case_id)
    gt.shutdown()


def _cases(root: Path, **extra: Any) -> Path:
    rows = [
        {"id": cid, "question": q, "reference_answer": f"{SHELF[book][0]} is lent to {member}.",
         "required_calls": [{"name": "check_shelf", "arguments": {"book_id": [book]}},
                            {"name": "lend", "arguments": {"book_id": [book],
                                                           "member": [member]}}],
         "ordered": True, **extra.get(cid, {})}
        for cid, (member, book, q) in LOANS.items()
    ]  # fmt: skip
    path = root / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loans")
    _desk(root / "v1", {})
    _desk(root / "v2", {"loan-b": "skip_check", "loan-c": "wrong_member"})
    _cases(root)
    (root / "tools.toml").write_text(
        "[tools.find_book]\nreads = []\n[tools.check_shelf]\nreads = []\n[tools.lend]\nreads = []\n"
    )
    return root


def _run(root: Path, cases: Path | None = None, **extra: Any) -> gate.GateResult:
    config = gate.Config(baseline=(str(root / "v1"),), candidate=(str(root / "v2"),),
                         cases=str(cases or root / "cases.jsonl"), **extra)  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        done = run_analysis(gate.ANALYSIS, config, out=out, concurrency=1)
    assert done.result is not None
    return done.result


def test_a_path_only_regression_goes_to_review_with_the_path_named(desk: Path) -> None:
    report = _run(desk).report
    decisions = {c.case_id: c.decision.value for c in report.cases}
    assert decisions == {"loan-a": "promote", "loan-b": "manual_review",
                         "loan-c": "manual_review"}  # fmt: skip
    assert report.case_level.decision is gate.Decision.MANUAL_REVIEW
    # 1 of 3 cases passing after 3 of 3: the regression risk blocks the run as well
    assert report.statistics is not None and report.statistics.decision is gate.Decision.BLOCK
    assert report.decision is gate.Decision.BLOCK and report.exit_code == 20
    reasons = {c.case_id: " ".join(c.reasons) for c in report.cases}
    assert "paths.command_path fail: path status missing_command" in reasons["loan-b"]
    assert "check_shelf" in reasons["loan-b"]
    assert "paths.command_path fail: path status param_error" in reasons["loan-c"]
    assert "m-99" in reasons["loan-c"] or "member" in reasons["loan-c"]
    # the text was right: only the path layer failed
    for case in report.cases:
        texts = [r for r in case.results if r.name == "reference_answer"]
        assert [r.status.value for r in texts] == ["pass"]
    assert report.changes is not None
    assert [c.case_id for c in report.changes.new] == ["loan-b", "loan-c"]


def test_a_critical_case_or_profile_blocks_on_a_failed_path(desk: Path, tmp_path: Path) -> None:
    cases = _cases(tmp_path, **{"loan-c": {"critical": True}})
    report = _run(desk, cases).report
    decisions = {c.case_id: c.decision.value for c in report.cases}
    assert decisions == {"loan-a": "promote", "loan-b": "manual_review", "loan-c": "block"}
    assert report.case_level.decision is gate.Decision.BLOCK

    text = gate.load_profile("balanced_default").raw_text
    assert "[paths]\ncritical = false" in text
    profile = tmp_path / "strict.toml"
    profile.write_text(text.replace("[paths]\ncritical = false", "[paths]\ncritical = true"))
    strict = _run(desk, profile=str(profile)).report
    assert {c.case_id: c.decision.value for c in strict.cases} == {
        "loan-a": "promote", "loan-b": "block", "loan-c": "block"
    }  # fmt: skip


def test_a_bad_paths_setting_names_the_profile_and_field(tmp_path: Path) -> None:
    profile = tmp_path / "bad.toml"
    profile.write_text('[profile]\nname = "x"\n[paths]\ncritical = "yes"\n')
    with pytest.raises(ConfigError) as raised:
        gate.load_profile(profile)
    assert str(profile) in str(raised.value) and "paths.critical" in str(raised.value)


def test_the_path_verdicts_are_in_the_snapshot_and_verify(desk: Path, tmp_path: Path) -> None:
    result = _run(desk, tools_config=str(desk / "tools.toml"))
    dataset = json.loads(result.dataset_json)
    assert dataset["paths"]["tools_config"] == str(desk / "tools.toml")
    assert {k: v["status"] for k, v in dataset["paths"]["candidate"].items()} == {
        "loan-a": "pass", "loan-b": "missing_command", "loan-c": "param_error"
    }  # fmt: skip
    path = gate.write_report(result, tmp_path / "out")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| checks | – | deterministic: 6 pass; guardrail: 15 pass; paths: 2 fail, 1 pass |" in (
        summary
    )
    assert gate.verify_report(path) == (True, gate.verify_report(path)[1])
    assert "re-derived" in gate.verify_report(path)[1]


def test_the_layer_does_not_apply_to_a_run_without_tools() -> None:
    verdict = PathVerdict("not_applicable")
    assert path_checks(verdict, critical=True) == []
    assert path_checks(None, critical=False) == []
    failed = path_checks(PathVerdict("tool_error", ("lend raised",)), critical=True)
    assert [(r.layer, r.name, r.status.value, r.critical) for r in failed] == [
        ("paths", "command_path", "fail", True)
    ]


def test_gate_run_takes_the_tools_config(desk: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "gate", "run", "--baseline", str(desk / "v1"), "--candidate", str(desk / "v2"),
        "--cases", str(desk / "cases.jsonl"), "--tools-config", str(desk / "tools.toml"),
        "--out", str(tmp_path / "cli"),
    ])  # fmt: skip
    assert result.exit_code == 20, result.output
    assert "paths.command_path" in result.output
    bad = CliRunner().invoke(app, [
        "gate", "run", "--baseline", str(desk / "v1"), "--candidate", str(desk / "v2"),
        "--cases", str(desk / "cases.jsonl"), "--tools-config", str(tmp_path / "none.toml"),
        "--out", str(tmp_path / "bad"),
    ])  # fmt: skip
    assert bad.exit_code == 2 and "none.toml" in bad.output


def test_the_judge_layer_judges_an_agent_against_its_tool_results(desk: Path) -> None:
    result = _run(desk, judge="lexical")
    dataset = json.loads(result.dataset_json)
    assert dataset["candidate"]["loan-a"]["tool_results"] == ["bk-1", "2", "loan bk-1/m-11"]
    verdicts = dataset["judge"]["candidate"]
    assert {k: v.get("context") for k, v in verdicts.items()} == dict.fromkeys(
        LOANS, "tool results"
    )
    assert all("missing" not in v and v["scores"] for v in verdicts.values())
    judged = [r for c in result.report.cases for r in c.results if r.layer == "judge"]
    assert judged and all("(judged against tool results)" in r.detail for r in judged)
