"""SDK → OTLP/HTTP → a real Arize Phoenix → its REST API and our Phoenix pull → τ.

Phoenix runs in a private network namespace (its gRPC receiver binds every interface): one
subprocess ``unshare -n sh -c 'ip link set lo up && python phoenix_scenario.py DATA'`` starts
it, runs the scenario, stops it and prints one JSON line, asserted on here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.support.data import HOTPOT
from tests.support.namespace import run_in_private_network

# Phoenix alone can take minutes to start on a busy 2-core machine: above the default timeout.
pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    phoenix_python = os.environ.get("GROUNDTRACE_PHOENIX_PYTHON", sys.executable)
    probe = subprocess.run(
        [phoenix_python, "-c", "import phoenix"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.fail(
            f"arize-phoenix is not importable by {phoenix_python} (make test builds .venv-phoenix; "
            "set GROUNDTRACE_PHOENIX_PYTHON)"
        )
    command = [sys.executable, "-m", "tests.integration.phoenix_scenario", str(HOTPOT)]
    out = run_in_private_network(command, timeout=1100)
    assert out["ok"], json.dumps(out, indent=1)[:6000]
    return out


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
