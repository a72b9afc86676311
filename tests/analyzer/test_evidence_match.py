"""The one evidence-matching rule: gold support given as ids or titles, in every analysis.

The traces come from a harbour-operations RAG app written from the README (its chunk ids are
the gold, as ``gate curate`` writes them); the old interventions compared cited *titles*
with the gold only, so grounding came out 0.000 on every item.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer._evidence_match import GoldSupport, evidence_key
from groundtrace.analyzer.cli import build_app
from tests.support.harbour_rag import PAGES, write_run

app = build_app()


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("harbour"))


def test_an_item_matches_by_id_or_title_case_folded_whitespace_collapsed() -> None:
    gold = GoldSupport(["hb-03", "  Pilot   Boarding "])
    assert evidence_key("  Pilot\tBOARDING ") == "pilot boarding"
    assert gold.match("HB-03", "Anchors") == "hb-03"
    assert gold.match("hb-01", "pilot boarding") == "  Pilot   Boarding "
    assert gold.match("hb-9", "Mooring lines") is None
    assert gold.unmatched([("hb-9", "Mooring lines"), ("hb-03", None)]) == ("  Pilot   Boarding ",)
    assert not GoldSupport(["", "  "])


def _interventions(harbour: Path, out: Path, cases: Path) -> tuple[int, dict, str]:
    res = CliRunner().invoke(
        app,
        ["interventions", str(harbour / "traces"), "--cases", str(cases), "--out", str(out),
         "--operators", "REMOVE"],
    )  # fmt: skip
    summary = (
        json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    )
    return res.exit_code, summary, res.output


@pytest.mark.timeout(120)
def test_interventions_grounding_with_ids_as_gold_equals_titles_as_gold(
    harbour: Path, tmp_path: Path
) -> None:
    code, by_ids, _ = _interventions(harbour, tmp_path / "ids", harbour / "cases.jsonl")
    assert code == 0
    grounding = by_ids["operators"]["REMOVE"]["axes"]["grounding"]
    assert grounding["original_mean"] == 1.0  # the old code: 0.0 on every item
    assert grounding["mean_delta"] == 1.0
    rows = [json.loads(line) for line in (harbour / "cases.jsonl").read_text().splitlines()]
    titled = tmp_path / "titles.jsonl"
    titled.write_text("".join(
        json.dumps({**r, "support_titles": [PAGES[r["support_titles"][0]][0].upper()]}) + "\n"
        for r in rows
    ))  # fmt: skip
    code, by_titles, _ = _interventions(harbour, tmp_path / "titles", titled)
    assert code == 0
    assert by_titles["operators"]["REMOVE"]["axes"]["grounding"] == grounding
    assert by_ids["findings"] == []


@pytest.mark.timeout(120)
def test_gold_matching_nothing_in_the_trace_is_a_finding(harbour: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (harbour / "cases.jsonl").read_text().splitlines()]
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("".join(
        json.dumps({**r, "support_titles": ["doc-" + r["case_id"]]}) + "\n" for r in rows
    ))  # fmt: skip
    code, summary, output = _interventions(harbour, tmp_path / "run", wrong)
    assert code == 0
    assert len(summary["findings"]) == len(rows)
    assert "case h1: none of its 1 gold support entries (doc-h1)" in summary["findings"][0]
    assert "finding: case h1: none of its 1 gold support entries" in output
    assert "case h1: none of its" in (tmp_path / "run" / "summary.md").read_text()


@pytest.mark.timeout(120)
def test_gate_required_context_by_ids_or_titles_and_unmatched_gold_is_a_finding(
    harbour: Path, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in (harbour / "cases.jsonl").read_text().splitlines()]
    titled = [{**r, "support_titles": [PAGES[r["support_titles"][0]][0].lower()]} for r in rows]
    unmatched = [{**r, "support_titles": ["doc-" + r["case_id"]]} for r in rows]
    reports = {}
    for name, cases in (("ids", rows), ("titles", titled), ("unmatched", unmatched)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(c) + "\n" for c in cases))
        res = CliRunner().invoke(
            app,
            ["gate", "run", "--baseline", str(harbour / "traces"), "--candidate",
             str(harbour / "traces"), "--cases", str(path), "--out", str(tmp_path / name),
             "--json"],
        )  # fmt: skip
        reports[name] = (res, json.loads(res.stdout.splitlines()[0]))
    for name in ("ids", "titles"):
        res, report = reports[name]
        assert res.exit_code == 0 and report["decision"] == "promote", res.output
        assert not any("gold support entries" in n for n in report["notes"])
    res, report = reports["unmatched"]
    assert res.exit_code == 20  # required context missing: critical, blocks
    notes = [n for n in report["notes"] if n.startswith("candidate: case h1: none of its 1 gold")]
    assert notes and "finding: candidate: case h1: none of its 1 gold" in res.stderr
