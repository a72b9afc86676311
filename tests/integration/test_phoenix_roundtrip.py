"""SDK → OTLP/HTTP → a real Arize Phoenix → its REST API and our Phoenix pull → τ.

Phoenix runs in a private network namespace (its gRPC receiver binds every interface): one
subprocess ``unshare -n sh -c 'ip link set lo up && python phoenix_scenario.py DATA'`` starts
it, runs the scenario, stops it and prints one JSON line, asserted on here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.phoenix_scenario import run_in_namespace
from tests.support.data import HOTPOT

# Phoenix alone can take minutes to start on a busy 2-core machine: above the default timeout.
pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_in_namespace("tests.integration.phoenix_scenario", HOTPOT)


def test_phoenix_ingests_every_span_with_the_openinference_kinds(result: dict[str, Any]) -> None:
    assert result["spans_exported"] == 12  # 3 requests x (REQUEST, RETRIEVE, ANSWER, LLM)
    assert result["spans_in_phoenix"] == result["spans_exported"]
    assert result["kinds_by_action"] == {
        "REQUEST": ["CHAIN"],
        "RETRIEVE": ["RETRIEVER"],
        "ANSWER": ["CHAIN"],
        "LLM": ["LLM"],
    }


def test_phoenix_shows_the_retrieved_documents_and_scores(result: dict[str, Any]) -> None:
    shown = sorted([[d["id"], d["score"]] for d in docs] for docs in result["retriever_documents"])
    assert shown == sorted(result["expected_documents"])
    assert all(d["has_content"] for docs in result["retriever_documents"] for d in docs)
    assert result["llm"]["model"] == ["local-model"] * 3
    assert result["llm"]["prompt_tokens"] == [42] * 3


def test_our_phoenix_pull_rebuilds_the_same_traces(result: dict[str, Any]) -> None:
    assert result["differences"] == {}
    pulled = result["pulled"]
    assert len(pulled) == 3
    for trace in pulled:
        assert trace["query"] and trace["case_id"]
        assert [e[0] for e in trace["evidence"]] == ["p0", "p1", "p2", "p3"]
        assert all(e[3] for e in trace["evidence"])  # content came back
        assert (trace["answer"], trace["confidence"], trace["cited_ids"]) == ("yes", 0.8, ["p0"])
        assert len(trace["llm_calls"]) == 1 and trace["llm_calls"][0][0] == "local-model"
        assert trace["findings"] == []


def test_the_cli_pull_writes_the_same_traces_and_fails_on_a_missing_project(
    result: dict[str, Any],
) -> None:
    assert result["cli_returncode"] == 0, result["cli_stderr"]
    assert result["cli_matches_pull"]
    assert result["missing_project_returncode"] == 2
    assert "no such project" in result["missing_project_stderr"]


def test_the_pulled_trace_model_file_is_analysed_as_it_is(result: dict[str, Any]) -> None:
    assert result["analysed_returncodes"] == [0, 0], result["analysed_stderr"]
    summary = result["pulled_summary"]
    assert summary["traces"] == 3 and summary["read_errors"] == []
    assert summary["steps_by_action"] == {"ANSWER": 3, "LLM": 3, "REQUEST": 3, "RETRIEVE": 3}
    judged = result["pulled_judged"]
    assert sorted(j["case_id"] for j in judged) == sorted(t["case_id"] for t in result["pulled"])
    assert all(j["scores"] for j in judged)
