"""The gate report splits failures into new ones, ones the baseline had, and fixed cases."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.gate import CaseDecision, Decision
from groundtrace.analyzer.gate._changes import ChangeKind, compare_cases
from tests.analyzer.gate import test_gate_run
from tests.analyzer.gate.test_gate_run import DOCS, QUESTIONS, _run_app

app = build_app()


def _case(case_id: str, decision: Decision, *reasons: str) -> CaseDecision:
    return CaseDecision(case_id, "general", decision, reasons, ())


def test_compare_cases_splits_new_known_and_fixed() -> None:
    baseline = [
        _case("a", Decision.PROMOTE),
        _case("b", Decision.BLOCK, "deterministic.answer fail"),
        _case("c", Decision.MANUAL_REVIEW, "guardrail.pii fail"),
        _case("d", Decision.PROMOTE),
    ]
    candidate = [
        _case("a", Decision.BLOCK, "deterministic.answer fail"),
        _case("b", Decision.NOT_EVALUABLE, "no check applied to this case"),
        _case("c", Decision.PROMOTE),
        _case("d", Decision.PROMOTE),
        _case("e", Decision.MANUAL_REVIEW, "guardrail.pii fail"),
    ]
    changes = compare_cases(baseline, candidate)
    assert [(c.case_id, c.baseline, c.candidate) for c in changes.new] == [
        ("a", Decision.PROMOTE, Decision.BLOCK),
        ("e", None, Decision.MANUAL_REVIEW),  # no baseline decision: new
    ]
    assert [(c.case_id, c.kind) for c in changes.known] == [("b", ChangeKind.KNOWN)]
    assert [(c.case_id, c.baseline_reasons) for c in changes.fixed] == [
        ("c", ("guardrail.pii fail",))
    ]
    assert "d" not in changes.by_case()


def test_a_failure_the_baseline_did_not_evaluate_is_new() -> None:
    """Fails closed: known only when the baseline evaluated the case and it failed there."""
    baseline = [
        _case("untraced", Decision.NOT_EVALUABLE, "no check applied to this case"),
        _case("review", Decision.MANUAL_REVIEW, "guardrail.pii fail"),
        _case("blocked", Decision.BLOCK, "deterministic.answer fail"),
        _case("was-untraced", Decision.NOT_EVALUABLE, "no check applied to this case"),
    ]
    candidate = [
        _case("untraced", Decision.BLOCK, "deterministic.answer fail"),
        _case("review", Decision.BLOCK, "deterministic.answer fail"),
        _case("blocked", Decision.MANUAL_REVIEW, "guardrail.pii fail"),
        _case("was-untraced", Decision.PROMOTE),
        _case("added", Decision.NOT_EVALUABLE, "no check applied to this case"),
    ]
    changes = compare_cases(baseline, candidate)
    assert [(c.case_id, c.baseline) for c in changes.new] == [
        ("untraced", Decision.NOT_EVALUABLE),
        ("added", None),
    ]
    assert [c.case_id for c in changes.known] == ["review", "blocked"]
    assert [(c.case_id, c.baseline) for c in changes.fixed] == [
        ("was-untraced", Decision.NOT_EVALUABLE)
    ]
    # nothing evaluated in either run: every failure is new, none known
    nothing = [_case(c.case_id, Decision.NOT_EVALUABLE) for c in candidate]
    assert compare_cases(nothing, nothing).known == ()
    assert len(compare_cases(nothing, nothing).new) == len(candidate)


def make_partial_baseline(root: Path, traced: set[str]) -> Path:
    """A baseline run (as ``make_runs``'s, without mistakes) that traced only ``traced``: a
    partial baseline artifact, or a pull request that adds the other cases."""
    with pytest.MonkeyPatch.context() as patch:
        kept = {k: v for k, v in QUESTIONS.items() if k in traced}
        patch.setattr(test_gate_run, "QUESTIONS", kept)
        _run_app(root / "partial", "1.0", top_k=3, mistakes=set())
    return root / "partial"


def make_runs(root: Path) -> Path:
    """Baseline gets q1 and q3 wrong; the candidate retrieves one document only (q2, q3 fail)."""
    _run_app(root / "baseline", "1.0", top_k=3, mistakes={"q1", "q3"})
    _run_app(root / "candidate", "1.1", top_k=1, mistakes=set())
    cases = [
        {"case_id": cid, "question": q, "reference_answer": ans, "required_context": [gold]}
        for cid, (q, gold, ans) in QUESTIONS.items()
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    assert set(DOCS) == {"p1", "p2", "p3"}
    return root


@pytest.fixture(scope="module")
def gate_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("changes"))


def gate_args(root: Path, out: str) -> list[str]:
    return [
        "gate", "run", "--baseline", str(root / "baseline"), "--candidate",
        str(root / "candidate"), "--cases", str(root / "cases.jsonl"), "--out", str(root / out),
    ]  # fmt: skip


def test_report_markdown_and_junit_separate_the_three(gate_dir: Path) -> None:
    junit = gate_dir / "r" / "junit.xml"
    result = CliRunner().invoke(app, [*gate_args(gate_dir, "r"), "--json", "--junit", str(junit)])
    report = json.loads(result.stdout.splitlines()[0])
    assert result.exit_code == report["exit_code"] == 20, result.output
    changes = report["changes"]
    assert [c["case_id"] for c in changes["new"]] == ["q2"]
    assert [c["case_id"] for c in changes["known"]] == ["q3"]
    assert [(c["case_id"], c["baseline"], c["candidate"]) for c in changes["fixed"]] == [
        ("q1", "manual_review", "promote")
    ]
    summary = (gate_dir / "r" / "summary.md").read_text(encoding="utf-8")
    assert "### New failures (passed in the baseline): 1" in summary
    assert "<summary>Failing in the baseline too: 1</summary>" in summary
    assert "<summary>Fixed (failed in the baseline): 1</summary>" in summary
    new_line = next(line for line in summary.splitlines() if line.startswith("- **q2**"))
    assert "required_context fail" in new_line
    fixed_line = next(line for line in summary.splitlines() if line.startswith("- **q1**"))
    assert fixed_line.startswith("- **q1** (general) was manual_review: ")
    suite = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    props = {
        name: {p.get("name"): p.get("value") for p in case.iter("property")}
        for name, case in cases.items()
    }
    assert props["q2"] == {"change": "new", "baseline_decision": "promote"}
    assert props["q3"]["change"] == "known" and props["q1"]["change"] == "fixed"
    failure_q2, failure_q3 = (cases[q].find("failure") for q in ("q2", "q3"))
    assert failure_q2 is not None and failure_q2.get("message") == "new failure: block"
    assert failure_q3 is not None and failure_q3.get("message", "").startswith("known failure")
    assert cases["q1"].find("failure") is None
    assert "fixed: baseline was manual_review" in (cases["q1"].findtext("system-out") or "")
    verified = CliRunner().invoke(app, ["gate", "verify", str(gate_dir / "r" / "report.json")])
    assert verified.exit_code == 0, verified.output


def test_analyze_gate_exits_with_the_decision_like_gate_run(gate_dir: Path, tmp_path: Path) -> None:
    """``groundtrace analyze gate`` on a config file decides as ``gate run`` and exits 20."""
    config = tmp_path / "gate.toml"
    config.write_text(
        f'baseline = ["{gate_dir / "baseline"}"]\ncandidate = ["{gate_dir / "candidate"}"]\n'
        f'cases = "{gate_dir / "cases.jsonl"}"\n',
        encoding="utf-8",
    )
    done = CliRunner().invoke(
        app, ["analyze", "gate", "--config", str(config), "--out", str(tmp_path / "o")]
    )
    assert done.exit_code == 20, done.output
    ran = CliRunner().invoke(app, gate_args(gate_dir, "same"))
    assert ran.exit_code == 20
    decided = json.loads((tmp_path / "o" / "report.json").read_text())
    again = json.loads((gate_dir / "same" / "report.json").read_text())
    assert decided["decision"] == again["decision"] == "block"
    assert decided["case_level"] == again["case_level"]


def test_cases_missing_from_the_baseline_are_new_failures(gate_dir: Path) -> None:
    """14 of 16 baseline traces missing passed new-failures-only: here 2 of 3 are missing."""
    partial = make_partial_baseline(gate_dir, {"q1"})
    args = gate_args(gate_dir, "partial-out")
    args[args.index("--baseline") + 1] = str(partial)
    result = CliRunner().invoke(app, [*args, "--json"])
    report = json.loads(result.stdout.splitlines()[0])
    assert result.exit_code == 20, result.output
    by_case = {c["case_id"]: c["decision"] for c in report["cases"]}
    assert by_case == {"q1": "promote", "q2": "block", "q3": "block"}
    changes = report["changes"]
    assert [(c["case_id"], c["baseline"]) for c in changes["new"]] == [
        ("q2", "not_evaluable"),
        ("q3", "not_evaluable"),
    ]
    assert changes["known"] == [] and changes["fixed"] == []
    summary = (gate_dir / "partial-out" / "summary.md").read_text(encoding="utf-8")
    assert "### New failures (passed in the baseline): 2" in summary
    assert "Failing in the baseline too" not in summary
    line = "- **q2** (general) block (was not_evaluable): `deterministic.required_context"
    assert line in summary
