"""``groundtrace judge run`` on real trace files: judged cases and unjudgeable traces."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "collectors"

app = build_app()


def test_run_on_traces_scores_judgeable_ones_and_lists_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app,
        ["judge", "run", str(FIXTURES / "groundtrace.spans.jsonl"), "--out", str(out), "--json"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    judged = summary["cases"]
    skipped = summary["not_judgeable"]
    assert judged >= 1 and judged + len(skipped) >= 2
    assert all(s["missing"] for s in skipped)
    assert summary["fingerprint"]["endpoint"] == "builtin:lexical"
    lines = (out / "judgments.jsonl").read_text().splitlines()
    assert len(lines) == judged
    first = json.loads(lines[0])
    assert set(first["scores"]) | {e["metric"] for e in first["errors"]} == {
        "context_relevance",
        "adherence",
        "answer_relevance",
    }


def test_run_without_inputs_is_a_clear_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["judge", "run", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "give trace paths" in res.output
