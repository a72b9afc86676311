"""REPLACE asked for on cases without replacement candidates: reported as not run, with the
fix, on screen, in summary.json, summary.md and the reading (it was silently dropped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from tests.support.harbour_rag import write_run

app = build_app()


@pytest.mark.timeout(120)
def test_replace_without_candidates_is_reported_not_run_with_the_fix(tmp_path: Path) -> None:
    harbour = write_run(tmp_path / "harbour")
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app,
        ["interventions", str(harbour / "traces"), "--cases", str(harbour / "cases.jsonl"),
         "--out", str(out), "--operators", "REMOVE", "--operators", "REPLACE"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    why = summary["not_run"]["REPLACE"]
    assert why.startswith("not run: no replacement candidates")
    assert "--pool-dataset" in why and "distractors" in why and "(6 of 6 item(s))" in why
    assert "REPLACE" not in summary["operators"]
    assert f"REPLACE {why}" in res.output
    assert f"- REPLACE: {why}" in (out / "summary.md").read_text()
    reading = res.output.split("Reading.", 1)[1]
    assert "REPLACE was asked for but not run: no replacement candidates" in reading
