"""``benchmarks/models.py --side-by-side`` on the real default model: it serves, times, reports."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(900)]

pytest.importorskip("llama_cpp")

ROOT = Path(__file__).resolve().parents[2]


def test_side_by_side_times_each_question_on_every_model_named() -> None:
    from groundtrace.analyzer.backends import DEFAULT_MODEL

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "models.py"), "--side-by-side", "2",
         "--models", DEFAULT_MODEL, "--threads", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["side_by_side"] == 2 and report["reference"] == DEFAULT_MODEL
    (row,) = report["models"]
    assert row["model"] == DEFAULT_MODEL and row["calls"] == 2
    assert math.isfinite(row["seconds_per_call"]) and row["seconds_per_call"] > 0
    # the reference's ratio to itself is 1 on every question
    assert row["ratio_to_reference"] == 1.0 and row["ratio_range"] == [1.0, 1.0]
    assert "2/2 questions timed" in done.stderr
