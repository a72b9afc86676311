"""Nothing measured is loud, the same way in every analysis: exit 6 (NothingMeasuredError)
with the reason on screen, the run folder's files kept. Before, these runs exited 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from tests.support.harbour_rag import CASES, PAGES, write_run
from tests.support.openai_server import OpenAICompatServer, Reply

app = build_app()
NOTHING_MEASURED = 6


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("harbour"))


@pytest.mark.timeout(120)
def test_interventions_with_every_replay_failed_exit_6_and_keep_the_reports(
    harbour: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app,
        ["interventions", str(harbour / "traces"), "--cases", str(harbour / "cases.jsonl"),
         "--out", str(out), "--operators", "REMOVE", "--operators", "ZERO",
         "--replay", "tests.support.harbour_rag:respond_broken"],
    )  # fmt: skip
    assert res.exit_code == NOTHING_MEASURED, res.output
    assert "nothing measured: every replay unit failed (12 of 12" in res.output
    assert "model server refused the connection" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nothing_measured"].startswith("every replay unit failed (12 of 12")
    assert (out / "results.jsonl").read_text().count("ConnectionError: model server") == 12
    assert "Nothing measured" in (out / "summary.md").read_text()


@pytest.mark.timeout(120)
def test_interventions_with_no_usable_trace_exit_6(harbour: Path, tmp_path: Path) -> None:
    bare = write_run(tmp_path / "bare", content=False)  # no evidence content: no replay
    res = CliRunner().invoke(
        app, ["interventions", str(bare / "traces"), "--out", str(tmp_path / "run")]
    )
    assert res.exit_code == NOTHING_MEASURED, res.output
    assert "nothing measured: no trace gave a usable item" in res.output


def _judgments(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]


@pytest.mark.timeout(120)
def test_judge_run_with_every_judgment_a_protocol_error_exits_6(
    harbour: Path, tmp_path: Path
) -> None:
    out = tmp_path / "judge"
    with OpenAICompatServer(handler=lambda _req: Reply(content="I cannot rate this.")) as srv:
        res = CliRunner().invoke(
            app,
            ["judge", "run", str(harbour / "traces"), "--out", str(out), "--judge", srv.base_url,
             "--model", "local-model"],
        )  # fmt: skip
    assert res.exit_code == NOTHING_MEASURED, res.output
    assert "nothing measured: every judgment of the 6 case(s) was a protocol error" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == 6
    assert all(m["scored"] == 0 for m in summary["metrics"].values())
    assert len(_judgments(out)) == 6


@pytest.mark.timeout(120)
def test_judge_validate_with_every_judgment_a_protocol_error_exits_6(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"g{i}",
            "item": {"question": q, "context": [PAGES[g][1]], "answer": PAGES[g][1]},
            "annotator_a": "pass",
            "annotator_b": "pass",
            "adjudicated": 1,
        }
        for i, (_, q, g) in enumerate(CASES * 5)
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "validate"
    with OpenAICompatServer(handler=lambda _req: Reply(content="no score today")) as srv:
        res = CliRunner().invoke(
            app,
            ["judge", "validate", "--gold", str(gold), "--out", str(out), "--judge",
             srv.base_url, "--model", "local-model"],
        )  # fmt: skip
    assert res.exit_code == NOTHING_MEASURED, res.output
    assert "nothing measured: every judgment of the 30 gold item(s) was a protocol error" in (
        res.output
    )
    assert json.loads((out / "validation.json").read_text())["n"] == 0
