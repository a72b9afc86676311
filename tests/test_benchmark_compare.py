"""benchmarks/compare.py: one benchmark under two interpreters, every figure paired."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.compare import _numbers

ROOT = Path(__file__).resolve().parents[1]


def test_numbers_are_found_by_path_and_method_is_left_out() -> None:
    report = {
        "ratios": {"a": 1.5, "b": 0, "c": True},
        "cases": {"x": {"ms": 2}},
        "method": {"rounds": 3},
        "python": "3.12",
    }
    assert _numbers(report) == {"ratios.a": 1.5, "cases.x.ms": 2.0}


@pytest.mark.timeout(300)
def test_compare_pairs_every_figure_of_two_runs() -> None:
    # the same interpreter on both sides: the driver runs, alternates and pairs
    command = ["-m", "benchmarks.compare", "--old", sys.executable, "--rounds", "2"]
    done = subprocess.run(
        [sys.executable, *command, "redaction", "--", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)["figures"]
    assert {"ratios.text_4kb", "cases.metadata_5_docs.redaction_on_ms"} <= set(figures)
    for figure in figures.values():
        assert all(math.isfinite(figure[k]) and figure[k] > 0 for k in ("new_over_old", "old"))
