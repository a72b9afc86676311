"""``--write-back phoenix`` against a real Arize Phoenix: annotations on the original spans, once.

Traces go to Phoenix over OTLP, come back with ``groundtrace collect phoenix``, and the gate and
the judge write their per-case results back as span annotations. Phoenix's REST API must then
return them on the original root spans, and a rerun must leave exactly the same annotations.
Runs inside a private network namespace like tests/integration/test_phoenix_roundtrip.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groundtrace.sdk import semconv as sc
from tests.integration.phoenix_scenario import run_in_namespace
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1200)]

REPO = Path(__file__).resolve().parents[2]
JUDGE_METRICS = ("adherence", "answer_relevance", "context_relevance")


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_in_namespace("tests.integration.phoenix_writeback_scenario", HOTPOT)


def test_phoenix_returns_the_verdicts_on_the_original_root_spans(result: dict[str, Any]) -> None:
    assert result["returncodes"][1::2] == [0, 0], result["stderr"]  # judge run, twice
    assert result["returncodes"][0] == result["returncodes"][2]  # the gate's decision code
    roots = result["roots"]
    span_case = {span: case for case, span in roots.items()}
    by_span: dict[str, dict[str, list[Any]]] = {}
    for _id, span, name, identifier, label, score, kind in result["first"]:
        assert kind == "CODE"
        assert identifier == f"groundtrace:{span_case[span]}"
        by_span.setdefault(span, {})[name] = [label, score]
    assert set(by_span) == set(roots.values())
    for case, span in roots.items():
        names = by_span[span]
        assert names[sc.GT_EVALUATION_GATE_CASE][0] == result["gate_decisions"][case]
        for metric in JUDGE_METRICS:
            label, score = names[f"{sc.GT_EVALUATION_JUDGE}.{metric}"]
            assert score == pytest.approx(result["judge_scores"][case][metric])
            assert label in {"pass", "fail"}


def test_a_rerun_updates_instead_of_duplicating(result: dict[str, Any]) -> None:
    assert len(result["first"]) == len(result["roots"]) * (1 + len(JUDGE_METRICS))
    assert result["second"] == result["first"]


def test_a_span_phoenix_does_not_have_is_an_error_after_the_report(
    result: dict[str, Any],
) -> None:
    assert result["missing_returncode"] == 4
    assert "do not exist" in result["missing_stderr"]
    assert result["missing_report_written"]
