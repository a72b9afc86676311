"""``groundtrace attribution --write-back phoenix`` against a real Arize Phoenix: each evidence
item's score is a document annotation named ``attribution`` under the very document it
concerns, with the score the report holds, and a rerun leaves exactly the same annotations.
Runs inside a private network namespace (:mod:`tests.integration.phoenix_attribution_scenario`).
"""

from __future__ import annotations

from typing import Any

import pytest

from groundtrace.sdk import semconv as sc
from tests.integration.phoenix_scenario import run_in_namespace
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_in_namespace("tests.integration.phoenix_attribution_scenario", HOTPOT)


def test_each_items_score_is_a_document_annotation_under_its_document(
    result: dict[str, Any],
) -> None:
    assert result["returncodes"] == [0, 0], result["stderr"]
    scores = {(r["trace_id"], s["id"]): s["score"] for r in result["rows"] for s in r["sources"]}
    rows = result["documents_first"]
    assert rows and len(rows) == len(scores)
    for span, position, name, label, metadata, score, explanation in rows:
        assert name == "attribution" and label is None
        assert metadata["evaluation"] == sc.GT_EVALUATION_EVIDENCE_ATTRIBUTION
        trace, item = metadata["trace_id"], metadata["evidence_id"]
        assert score == pytest.approx(scores[trace, item])
        assert "leave-one-out, tier endpoint" in explanation
        # under the very document the score is about, as the trace and Phoenix hold it
        assert result["documents"][trace][span][position] == item
        assert result["phoenix_documents"][span][position] == item


def test_a_rerun_updates_instead_of_duplicating(result: dict[str, Any]) -> None:
    assert result["documents_second"] == result["documents_first"]
