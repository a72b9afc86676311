"""The pure helpers of ``benchmarks/attribution.py``: which evidence a sentence-level item
shows, and how the per-item rows are summarised."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from benchmarks.attribution import gold_passages, items_summary, sentences_summary, summary_only
from groundtrace.analyzer.cases import Case, Passage


def _case() -> Case:
    passages = (
        Passage(id="q:0", title="Mallard", text="The mallard is a dabbling duck."),
        Passage(id="q:1", title="Jaws (film)", text="Jaws is a 1975 film by Steven Spielberg."),
        Passage(id="q:2", title="Spielberg", text="Steven Spielberg directed the film Jaws."),
        Passage(id="q:3", title="Shark", text="Sharks appear in the film Jaws by Spielberg."),
        Passage(id="q:4", title="Jaws 2", text="Jaws 2 is a 1978 sequel."),
    )
    return Case(
        case_id="q",
        question="Who directed the film Jaws?",
        reference_answer="Steven Spielberg",
        support_titles=("Jaws (film)", "Spielberg"),
        passages=passages,
    )


def test_gold_passages_keep_the_gold_and_the_best_distractors() -> None:
    case = _case()
    assert [p.id for p in gold_passages(case, 3)] == ["q:1", "q:2", "q:3"]
    assert [p.id for p in gold_passages(case, 2)] == ["q:1", "q:2"]
    assert {p.id for p in gold_passages(case, 4)} == {"q:1", "q:2", "q:3", "q:4"}


def _item(case_id: str, rho: float, top1: bool, gap: float, ratio: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "case_id": case_id, "spearman": rho, "top1_agree": top1, "context_gap": gap,
        "loo_seconds": None, "loo_passes": 5, "shapley_passes": 16,
    }  # fmt: skip
    if ratio is not None:
        row.update(
            app_call={"seconds": 10.0, "completion_tokens": 20},
            loo_uncached_seconds=10.0 * ratio,
            loo_over_app_call=ratio,
        )
    return row


def test_items_summary_reports_the_side_by_side_ratio() -> None:
    rows = [
        _item("a", 0.8, True, 2.0, 1.5),
        _item("b", math.nan, True, 0.5, 2.5),
        _item("c", 1.0, False, 1.5, 1.0),
    ]
    out = items_summary(rows)
    assert out["median_spearman_loo_vs_shapley"] == pytest.approx(0.9)
    assert out["spearman_defined"] == 2
    assert out["top1_agreement"] == pytest.approx(2 / 3)
    assert out["context_dependent_share"] == pytest.approx(2 / 3)
    side = out["loo_vs_app_call"]
    assert (side["n"], side["ratio_median"], side["ratio_min"], side["ratio_max"]) == (
        3, 1.5, 1.0, 2.5
    )  # fmt: skip
    assert side["items_within_2x"] == 2
    assert "loo_vs_app_call" not in items_summary([_item("a", 0.8, True, 2.0, None)])


def _sentence_row(ours: float, theirs: float, gap: float) -> dict[str, Any]:
    def method(value: float, passes: int) -> dict[str, Any]:
        return {"top1_drop": value, "top3_drop": value, "lds": value / 10, "passes": passes}

    return {"hierarchical": method(ours, 20), "contextcite": method(theirs, 32), "context_gap": gap}


def test_sentences_summary_pairs_the_methods() -> None:
    rows = [_sentence_row(2.0 + i % 3, 1.0 + i % 2, 1.5 if i % 2 else 0.5) for i in range(10)]
    out = sentences_summary(rows)
    assert out["n"] == 10
    top1 = out["top1_drop"]
    assert top1["difference"] == pytest.approx(top1["hierarchical"] - top1["contextcite"])
    assert 0 < top1["ci_low"] <= top1["difference"] <= top1["ci_high"]
    assert out["passes"] == {"hierarchical": 20, "hierarchical_max": 20, "contextcite": 32}
    assert out["context_dependent_share"] == pytest.approx(0.5)
    dependent = out["context_dependent"]
    assert dependent["n"] == 5
    assert dependent["top1_drop"]["hierarchical"] == pytest.approx(
        statistics.mean(2.0 + i % 3 for i in range(1, 10, 2))
    )


def test_an_undefined_lds_counts_for_neither_method() -> None:
    rows = [_sentence_row(2.0, 1.0, 2.0) for _ in range(4)]
    rows[0]["hierarchical"]["lds"] = math.nan
    lds = sentences_summary(rows)["lds"]
    assert lds["items"] == 3
    assert lds["hierarchical"] == pytest.approx(0.2)
    assert lds["difference"] == pytest.approx(0.1)


def test_summary_only_reads_the_rows_in_the_folder(tmp_path: Path) -> None:
    rows = [dict(_sentence_row(2.0 + i % 3, 1.0, 2.0), case_id=str(i)) for i in range(4)]
    lines = [json.dumps(r) for r in rows]
    (tmp_path / "sentences_gold3.jsonl").write_text("\n".join(lines + lines[:1]) + "\n")
    out = summary_only(tmp_path, 4, 3)
    assert list(out) == ["sentences"]
    assert out["sentences"]["n"] == 4  # a row written twice counts once
    assert summary_only(tmp_path, 4, 2) == {}
