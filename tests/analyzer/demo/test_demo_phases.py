"""The demo's gate between two app versions and its command-path report (lexical model)."""

from __future__ import annotations

import json
from pathlib import Path

from groundtrace.analyzer.demo import DemoConfig, run_demo
from groundtrace.examples.agent_docs.app import FAULTS, LUCKY_FAULTS


def test_demo_gates_top2_against_top5_and_reports_masked_failures(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = run_demo(DemoConfig(model="lexical", questions=6, out=out, gate_top_k=2, paths=True))
    report = result.report
    assert (report.app_version, report.candidate_version) == ("1.0.0+bm25-top5", "1.0.0+bm25-top2")
    gate = report.analyses["gate"]
    written = json.loads(Path(gate.report).read_text())
    assert written["exit_code"] == gate.exit_code  # the decision's code, 0 promote ... 30
    assert written["decision"] in {"promote", "manual_review", "block", "not_evaluable"}
    assert written["case_level"]["reasons"]  # a decision always says why
    assert result.configs["gate"].candidate == (str(out / "candidate" / "traces"),)
    candidate = list((out / "candidate" / "traces").iterdir())
    assert candidate  # the candidate version's own traces

    paths = report.analyses["paths"]
    assert Path(paths.report) == out / "paths" / "report.json"
    lucky = {case for case, fault in FAULTS.items() if fault in LUCKY_FAULTS}
    assert set(json.loads(Path(paths.report).read_text())["metrics"]["masked_failures"]) == lucky


def test_phases_run_only_when_asked(tmp_path: Path) -> None:
    result = run_demo(DemoConfig(model="lexical", questions=1, out=tmp_path / "d"))
    assert result.report.analyses == {} and result.runs == {}
    assert not (tmp_path / "d" / "gate").exists() and not (tmp_path / "d" / "agent").exists()
    assert not (tmp_path / "d" / "judge").exists()


def test_cli_prints_one_row_per_operator_gate_and_paths(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    args = ["demo", "--model", "lexical", "--questions", "4", "--interventions", "4",
            "--audit-sources", "0", "--out", str(tmp_path / "o")]  # fmt: skip
    result = CliRunner().invoke(build_app(), args, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("evidence interventions"))
    table = lines[start : start + 14]
    # one row per CUE-R operator (the default), Δ and p on its first line, the CI below
    rows = [i for i, line in enumerate(table) if line.startswith("│ ") and "p=" in line]
    assert [table[i].split()[1] for i in rows] == ["REMOVE", "REPLACE", "DUPLICATE"]
    assert all(table[i + 1].count("[") == 5 for i in rows)  # not wrapped at 120 columns
    assert max(len(line) for line in table) <= 120
    assert "roles over 4 items" in result.output
    assert "joint ablation: not run" in result.output
    assert "wall time:" in result.output and "interventions" in result.output
    assert "Release gate 1.0.0+bm25-top5 -> 1.0.0+bm25-top2" in result.output
    assert "exit code" in result.output and "masked failures" in result.output
    # the attribution of the first 2 answers (the default): one line each, then its reading
    assert "Attribution of the app's answers" in result.output
    assert result.output.count(": top evidence ") == 2
    assert "2 answer(s) attributed (behavioural tier)" in result.output


def test_operators_option_selects_the_rows(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    args = ["demo", "--model", "lexical", "--questions", "3", "--interventions", "3",
            "--operators", "REMOVE,ZERO", "--operators", "JOINT", "--gate-top-k", "0",
            "--no-paths", "--audit-sources", "0", "--json",
            "--out", str(tmp_path / "o")]  # fmt: skip
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    replayed = json.loads(Path(report["analyses"]["interventions"]["report"]).read_text())
    assert replayed["seeds"]["operators"] == ["REMOVE", "ZERO", "JOINT_REMOVE"]
    assert set(replayed["operators"]) == {"REMOVE", "ZERO"}
    assert list(report["phase_seconds"]) == [
        "model server", "app", "attribution", "interventions", "judge",
    ]  # fmt: skip

    bad = [*args[:7], "--operators", "SHUFFLE", "--out", str(tmp_path / "bad")]
    result = CliRunner().invoke(build_app(), bad)
    assert result.exit_code == 2 and "SHUFFLE" in result.output


def test_the_attribution_option_sizes_or_skips_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    args = ["demo", "--model", "lexical", "--questions", "3", "--interventions", "0",
            "--gate-top-k", "0", "--no-paths", "--audit-sources", "0", "--no-judge",
            "--json"]  # fmt: skip
    sized = CliRunner().invoke(build_app(), [*args, "--attribution", "2", "--out",
                                             str(tmp_path / "a")])  # fmt: skip
    assert sized.exit_code == 0, sized.output
    entry = json.loads(sized.stdout)["analyses"]["attribution"]
    assert len(json.loads((tmp_path / "a" / "attribution" / "attribution.json").read_text())
               ["rows"]) == 2 and "2 answer(s) attributed" in entry["reading"]  # fmt: skip
    skipped = CliRunner().invoke(build_app(), [*args, "--attribution", "0", "--out",
                                               str(tmp_path / "s")])  # fmt: skip
    assert skipped.exit_code == 0 and json.loads(skipped.stdout)["analyses"] == {}
    bad = CliRunner().invoke(build_app(), [*args, "--attribution", "-1", "--out",
                                           str(tmp_path / "b")])  # fmt: skip
    assert bad.exit_code == 2 and "--attribution" in bad.output
