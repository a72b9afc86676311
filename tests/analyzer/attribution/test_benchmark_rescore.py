"""The rescoring of ``benchmarks/attribution.py``: scores read from other runs' caches
without writing to them, and the summary of rescored rows (the items after the design set)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from benchmarks.attribution import DESIGN_ITEMS, LayeredCache, sentences_summary, summary_only
from groundtrace.analyzer.attribution._cache import ScoreCache


def test_a_layered_cache_reads_other_runs_and_writes_only_its_own(tmp_path: Path) -> None:
    other = ScoreCache(tmp_path / "long" / "scores.sqlite")
    other.put("a", [-1.0, -0.5])
    layered = LayeredCache(tmp_path / "v2" / "scores.sqlite", [other.path, tmp_path / "none"])
    assert layered.get("a") == [-1.0, -0.5]
    assert layered.get("b") is None
    layered.put("b", [-2.0])
    assert layered.get("b") == [-2.0]
    assert other.get("b") is None and len(other) == 1  # the other run's cache is untouched
    layered.put("a", [-9.0])  # its own copy now answers first
    assert layered.get("a") == [-9.0] and other.get("a") == [-1.0, -0.5]


def _row(index: int, ours: float, theirs: float) -> dict[str, Any]:
    def method(value: float) -> dict[str, Any]:
        return {"top1_drop": value, "top3_drop": value, "lds": value / 10, "passes": 24}

    return {
        "case_id": f"c{index}", "index": index, "hierarchical": method(ours),
        "contextcite": method(theirs), "context_gap": 2.0,
    }  # fmt: skip


def test_rescored_rows_are_also_summarised_after_the_design_items(tmp_path: Path) -> None:
    rows = [_row(i, 2.0 if i in DESIGN_ITEMS else 1.0, 1.5) for i in [*range(22), 34]]
    out = sentences_summary(rows)
    later = out["after_design_items"]
    assert later["indices"] == [18, 19, 20, 21]
    assert later["n"] == 4 and later["top1_drop"]["difference"] == pytest.approx(-0.5)
    assert out["top1_drop"]["difference"] == pytest.approx((19 * 0.5 - 4 * 0.5) / 23)
    assert "after_design_items" not in sentences_summary([{**r, "index": -1} for r in rows])
    assert "lds_vs_contextcite_24" not in out
    same = sentences_summary([{**r, "contextcite_24_lds": 0.1} for r in rows])
    assert same["lds_vs_contextcite_24"]["items"] == 23
    assert same["lds_vs_contextcite_24"]["difference"] == pytest.approx(
        statistics.mean(r["hierarchical"]["lds"] - 0.1 for r in rows)
    )
    (tmp_path / "sentences_gold3_v2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert summary_only(tmp_path, 4, 3)["sentences_v2"]["n"] == 23
