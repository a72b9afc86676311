"""Gate reports that read right: the thresholds each stratum is judged by, lists never cut
silently, new vs known failures, and a gold in the wrong format told apart from a gold the
candidate did not retrieve.

The data is an orchard's frost warnings (a domain the repository holds nowhere else): outcomes
written here, no app needed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import groundtrace.analyzer.gate as gate
from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.gate._cases import CaseOutcome, CheckResult, RetrievedItem
from groundtrace.analyzer.gate._decision import decide_case, decide_run
from groundtrace.analyzer.gate._run import GateResult, evaluate

app = build_app()

FROST = RetrievedItem("fw-1", "Frost warning", "warnings.md", "1", "Frost below -2 C.")
OTHER = RetrievedItem("fw-2", "Irrigation", "water.md", "1", "Water at dawn.")


def _evaluate(*args: Any, **kwargs: Any) -> GateResult:
    return asyncio.run(evaluate(*args, **kwargs))


def _cases(n: int, stratum: str = "general", gold: str = "fw-1") -> list[Case]:
    return [
        Case(f"{stratum}-{i:02d}", "When is there frost?", "below -2 C", support_titles=(gold,),
             stratum=stratum)
        for i in range(n)
    ]  # fmt: skip


def _outcomes(
    cases: list[Case], good: int, items: tuple[RetrievedItem, ...] = (FROST,)
) -> dict[str, CaseOutcome]:
    """The first ``good`` cases answer right from ``items``, the others say nothing useful."""
    return {
        c.case_id: CaseOutcome(
            c.case_id, "below -2 C" if i < good else "No idea.", items if i < good else (OTHER,)
        )
        for i, c in enumerate(cases)
    }


def test_each_strata_row_shows_the_thresholds_it_is_judged_by(tmp_path: Path) -> None:
    cases = _cases(20) + _cases(6, "critical")
    base = {**_outcomes(cases[:20], 20), **_outcomes(cases[20:], 6)}
    cand = {**_outcomes(cases[:20], 18), **_outcomes(cases[20:], 6)}
    profile = gate.load_profile("balanced_default")
    result = _evaluate(cases, base, cand, profile)
    stats = result.report.statistics
    assert stats is not None
    rows = {s.stratum: s for s in stats.strata}
    assert (rows["general"].delta, rows["general"].tau_block, rows["general"].tau_review) == (
        0.05, 0.975, 0.9
    )  # fmt: skip
    assert (rows["critical"].delta, rows["critical"].tau_block) == (0.03, 0.95)
    out = gate.write_report(result, tmp_path)
    data = json.loads(out.read_text())
    general = next(s for s in data["statistics"]["strata"] if s["stratum"] == "general")
    assert (general["delta"], general["tau_block"], general["tau_review"]) == (0.05, 0.975, 0.9)
    summary = (tmp_path / "summary.md").read_text()
    assert "| ρ_c | δ_c | τ_b | τ_r | decision |" in summary
    line = next(row for row in summary.splitlines() if row.startswith("| general |"))
    assert "| 0.05 | 0.975 | 0.9 |" in line
    assert f"pooled ρ = {stats.rho:.3f} → {stats.pooled_decision.value}" in summary
    html = (tmp_path / "report.html").read_text()
    assert "τ_block" in html and "0.975" in html


def test_a_stratum_that_escalates_by_its_own_thresholds_is_read_so() -> None:
    cases = _cases(100) + _cases(10, "domain_specific")
    base = {**_outcomes(cases[:100], 100), **_outcomes(cases[100:], 10)}
    cand = {**_outcomes(cases[:100], 100), **_outcomes(cases[100:], 7)}
    run = _evaluate(cases, base, cand, gate.load_profile("balanced_default"))
    stats = run.report.statistics
    assert stats is not None and stats.pooled_decision is gate.Decision.PROMOTE
    small = next(s for s in stats.strata if s.stratum == "domain_specific")
    assert small.decision is gate.Decision.MANUAL_REVIEW and small.rho is not None
    assert small.tau_review is not None and small.rho >= small.tau_review
    text = gate.reading(run)
    assert f"pooled regression risk ρ = {stats.rho:.3f}" in text
    assert (
        f"In the stratum domain_specific, ρ_c = {small.rho:.3f} is at or above its own review "
        f"threshold 0.9 (δ_c = 0.05): manual review, stricter than the pooled promote."
    ) in text


def test_no_list_of_cases_is_cut_silently(tmp_path: Path) -> None:
    cases = _cases(11, "critical")
    base = _outcomes(cases, 11)
    cand = _outcomes(cases, 0)
    report = _evaluate(cases, base, cand, gate.load_profile("balanced_default")).report
    (reason,) = report.case_level.reasons
    assert reason.startswith("11 case(s) block: critical-00, ")
    assert reason.endswith("critical-09 and 1 more")
    assert len([c for c in report.cases if c.decision is gate.Decision.BLOCK]) == 11
    review = decide_run(
        [gate.CaseDecision(f"c{i}", "general", gate.Decision.MANUAL_REVIEW, (), ())
         for i in range(13)], 0.9,
    )  # fmt: skip
    assert review.reasons[0].endswith("c9 and 3 more")
    many = CheckResult("deterministic", "required_context", gate.CheckStatus.FAIL,
                       critical=True, evidence=("a", "b", "c", "d", "e"))  # fmt: skip
    decided = decide_case("x", "general", [many])
    assert decided.reasons[0].endswith("(a; b; c and 2 more)")


def test_new_and_known_failures_are_told_apart_on_screen() -> None:
    cases = _cases(12)
    base = _outcomes(cases, 3)  # 9 failing already
    cand = _outcomes(cases, 1)  # 2 more failing
    report = _evaluate(cases, base, cand, gate.load_profile("balanced_default")).report
    lines = gate.change_lines(report)
    assert lines == [
        "new failures (did not fail in the baseline): 2: general-01, general-02",
        "failing in the baseline too: 9: general-03, general-04, general-05, general-06, "
        "general-07, general-08, general-09, general-10, general-11",
    ]
    assert gate.change_lines(report, limit=3)[1].endswith("general-05 and 6 more")
    assert "2 are new (they did not fail in the baseline) and 9 failed in the baseline too" in (
        gate.reading(report)
    )


def test_a_gold_no_trace_matches_is_a_finding_a_missed_gold_is_a_regression(
    tmp_path: Path,
) -> None:
    import groundtrace.sdk as gt
    from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

    def orchard(out: Path, finds_gold: bool) -> None:
        gt.configure(service_name="orchard", exporter=OTLPJsonFileExporter(out),
                     capture_content=True, redact=False)  # fmt: skip

        @gt.retrieve(retriever="board", k=1)
        def warnings(question: str) -> list[dict[str, str]]:
            item = FROST if finds_gold else OTHER
            return [{"id": item.id, "title": item.title, "content": item.content or ""}]

        @gt.answer
        def reply(question: str, evidence: list[dict[str, str]]) -> str:
            return "below -2 C" if evidence[0]["id"] == "fw-1" else "No idea."

        @gt.request(app_name="orchard")
        def ask(question: str, case_id: str) -> object:
            return reply(question, warnings(question))

        ask("When is there frost?", case_id="o-1")
        ask("When is there frost, again?", case_id="o-2")
        gt.shutdown()

    orchard(tmp_path / "v1", finds_gold=True)
    orchard(tmp_path / "v2", finds_gold=False)
    rows = [
        {"case_id": "o-1", "question": "When is there frost?", "support_titles": ["fw-1"]},
        {"case_id": "o-2", "question": "When is there frost, again?",
         "support_titles": ["Frost warnings.md"]},  # matches no id, title or source anywhere
    ]  # fmt: skip
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = gate.Config(baseline=(str(tmp_path / "v1"),), candidate=(str(tmp_path / "v2"),),
                         cases=str(cases))  # fmt: skip
    units = gate.plan(config)
    assert [f.split(":")[:2] for f in units.findings] == [
        ["baseline", " case o-2"], ["candidate", " case o-2"]
    ]  # fmt: skip
    assert all("check that the gold holds the ids or titles" in f for f in units.findings)
    done = run_analysis(gate.ANALYSIS, config, out=tmp_path / "shape", units=units)
    assert done.result is not None
    decided = done.result.report
    reasons = {c.case_id: " ".join(c.reasons) for c in decided.cases}
    assert "required_context fail: 1 of 1 required items not retrieved (fw-1)" in reasons["o-1"]
    cli = CliRunner().invoke(app, [
        "gate", "run", "--baseline", str(tmp_path / "v1"), "--candidate", str(tmp_path / "v2"),
        "--cases", str(cases), "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert "finding: candidate: case o-2" in cli.output
    assert "case o-1: none of its" not in cli.output


def test_the_demo_screen_separates_new_from_known_failures(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from groundtrace.analyzer.cli._app import console
    from groundtrace.analyzer.cli._demo import _print_gate

    cases = _cases(12)
    run = _evaluate(cases, _outcomes(cases, 3), _outcomes(cases, 1),
                    gate.load_profile("balanced_default"))  # fmt: skip
    path = gate.write_report(run, tmp_path)
    demo = SimpleNamespace(report=SimpleNamespace(app_version="1", candidate_version="2"))
    with console.capture() as captured:
        _print_gate(demo, run, str(path))  # type: ignore[arg-type]
    text = " ".join(captured.get().split())
    assert "new failures (did not fail in the baseline): 2: general-01, general-02" in text
    assert "failing in the baseline too: 9: general-03," in text
