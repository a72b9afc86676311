"""A critical case blocks on any failed check (SPEC 4.5, ``Case.critical``: "a failure always
blocks"), whether flagged ``critical`` or in the ``critical`` stratum; before, a wrong
answer on one went to manual review like any other case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from tests.support.harbour_rag import write_run

app = build_app()


@pytest.mark.timeout(180)
def test_a_wrong_answer_on_a_critical_case_blocks_by_flag_and_by_stratum(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base")
    cand = write_run(tmp_path / "cand", wrong=True)  # same retrieval, wrong answers
    rows = [json.loads(line) for line in (base / "cases.jsonl").read_text().splitlines()]
    marks = {"h1": {"critical": True}, "h2": {"stratum": "critical"}}
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**r, **marks.get(r["case_id"], {})}) + "\n" for r in rows))
    res = CliRunner().invoke(
        app,
        ["gate", "run", "--baseline", str(base / "traces"), "--candidate", str(cand / "traces"),
         "--cases", str(cases), "--out", str(tmp_path / "gate"), "--json"],
    )  # fmt: skip
    report = json.loads(res.stdout.splitlines()[0])
    decided = {c["case_id"]: c for c in report["cases"]}
    for critical in ("h1", "h2"):
        assert decided[critical]["decision"] == "block", decided[critical]
        assert any(
            r.startswith("deterministic.reference_answer fail") and "[critical case]" in r
            for r in decided[critical]["reasons"]
        )
    assert decided["h3"]["decision"] == "manual_review"  # a general case: review, not block
    assert "h1" in report["case_level"]["reasons"][0] and "h2" in report["case_level"]["reasons"][0]
    assert res.exit_code == 20
