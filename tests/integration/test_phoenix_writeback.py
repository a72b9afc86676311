"""``--write-back phoenix`` against a real Arize Phoenix: results in Phoenix's own views, once.

The HotpotQA example app exports its traces to Phoenix over OTLP and to a file; the gate, the
judge and the interventions write their results back. Phoenix must then hold each gate
decision and judge score as a *trace annotation* (its trace annotation scores panel), each
evidence role as a *document annotation* under the retrieved document it concerns, with
short names Phoenix's UI does not cut into one another; a rerun must leave exactly the same
annotations, and ``groundtrace collect phoenix`` must read every one of them back as the
trace's evaluations. Runs inside a private network namespace like test_phoenix_roundtrip.py
(one Phoenix for the whole module).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from groundtrace.sdk import semconv as sc
from tests.integration.phoenix_scenario import run_in_namespace
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.phoenix, pytest.mark.timeout(1500)]

JUDGE_METRICS = ("adherence", "answer_relevance", "context_relevance")
#: The documented scores of label-only verdicts (docs/ci.md), written out independently.
GATE_SCORES = {"promote": 1.0, "manual_review": 0.5, "block": 0.0, "not_evaluable": None}
HARMFUL, HELPFUL = {"distracting", "confidence-distorting"}, {"constructive", "corrective"}


def role_score(label: str, explanation: str | None) -> float | None:
    roles = set() if label == "none" else set(label.split(","))
    if roles & HARMFUL:
        return 0.0
    if roles & HELPFUL:
        return 1.0
    return 0.5 if roles or not explanation else None


#: How many characters of an annotation name Phoenix's UI shows before cutting it.
SHOWN = 12


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_in_namespace("tests.integration.phoenix_writeback_scenario", HOTPOT)


def test_gate_and_judge_results_are_trace_annotations_with_readable_names(
    result: dict[str, Any],
) -> None:
    assert result["returncodes"][1:3] == [0, 0], result["stderr"]  # judge, interventions
    assert result["returncodes"][:3] == result["returncodes"][3:], result["stderr"]
    by_trace: dict[str, dict[str, list[Any]]] = {}
    for _id, trace, name, identifier, label, score, kind, evaluation in result["traces_first"]:
        assert kind == "CODE" and identifier.startswith("groundtrace:")
        by_trace.setdefault(trace, {})[name] = [label, score, evaluation]
    assert set(by_trace) == set(result["trace_ids"])
    for case, trace in result["case_traces"].items():
        names = by_trace[trace]
        assert set(names) == {"gate", *JUDGE_METRICS}
        assert names["gate"][0] == result["gate_decisions"][case]
        # a label-only verdict carries its score, so Phoenix charts it
        assert names["gate"][1] == GATE_SCORES[result["gate_decisions"][case]]
        assert names["gate"][2] == sc.GT_EVALUATION_GATE_CASE
        for metric in JUDGE_METRICS:
            label, score, evaluation = names[metric]
            assert score == pytest.approx(result["judge_scores"][case][metric])
            assert label in {"pass", "fail"} and evaluation == f"{sc.GT_EVALUATION_JUDGE}.{metric}"
    assert len({name[:SHOWN] for name in ("gate", *JUDGE_METRICS)}) == 4  # told apart in the UI


def test_evidence_roles_are_document_annotations_under_their_documents(
    result: dict[str, Any],
) -> None:
    rows = result["documents_first"]
    targets = {
        (r["trace_id"], r["target_id"]) for r in result["iv_rows"] if r["operator"] == "REMOVE"
    }
    assert rows and len(rows) == len(targets)
    for span, position, name, label, metadata, score, explanation in rows:
        assert name == "role" and label
        assert score == role_score(label, explanation)
        trace = metadata["trace_id"]
        assert (trace, metadata["evidence_id"]) in targets
        # the annotation sits under the very document the role is about, as Phoenix holds it
        assert result["documents"][trace][span][position] == metadata["evidence_id"]
        assert result["phoenix_documents"][span][position] == metadata["evidence_id"]


def test_a_rerun_updates_instead_of_duplicating(result: dict[str, Any]) -> None:
    assert len(result["traces_first"]) == len(result["trace_ids"]) * (1 + len(JUDGE_METRICS))
    assert result["traces_second"] == result["traces_first"]
    assert result["documents_second"] == result["documents_first"]


def test_collect_phoenix_reads_every_annotation_back(result: dict[str, Any]) -> None:
    assert result["pulled_returncode"] == 0, result["pulled_stderr"]
    pulled = result["pulled_evaluations"]
    written = len(result["traces_first"]) + len(result["documents_with_extra"])
    assert len(result["documents_with_extra"]) == len(result["documents_first"]) + 1
    assert len(pulled) == written
    roots = result["pulled_roots"]
    trace_level = {(t, n) for t, s, n, *_rest in pulled if s == roots[t]}
    assert trace_level == {
        (trace, evaluation) for _i, trace, *_rest, evaluation in result["traces_first"]
    }
    on_documents = [p for p in pulled if p[1] in result["retrieval_spans"]]
    assert len(on_documents) == len(result["documents_with_extra"])
    assert {p[2] for p in on_documents} == {sc.GT_EVALUATION_EVIDENCE_ROLE}
    # each keeps the document it was written under, and the score written with it
    read = sorted(
        (s, pos, evidence, label, v) for _t, s, _n, v, label, evidence, pos in on_documents
    )
    written_rows = sorted(
        (s, pos, metadata["evidence_id"], label, score)
        for s, pos, _n, label, metadata, score, _x in result["documents_with_extra"]
    )
    assert read == written_rows


def test_two_roles_on_one_retrieval_span_are_told_apart_after_the_round_trip(
    result: dict[str, Any],
) -> None:
    (extra,) = result["extra_roles"]
    trace, span = extra[0], extra[1]
    on_span = [p for p in result["pulled_evaluations"] if p[0] == trace and p[1] == span]
    assert len(on_span) == 2  # the interventions' role and the second one
    (first,) = [p for p in on_span if p[6] != extra[2]]
    (second,) = [p for p in on_span if p[6] == extra[2]]
    assert second[5] == extra[3] and second[4] == extra[4] and second[3] == extra[5]
    assert first[5] != second[5] and first[3] != second[3]  # other document, opposite score
    for p in on_span:  # both under the documents Phoenix holds at their positions
        assert result["phoenix_documents"][span][p[6]] == p[5]


def test_the_request_output_phoenix_shows_is_json(result: dict[str, Any]) -> None:
    mime, value = result["root_output"]
    assert mime == "application/json"
    output = json.loads(value)
    assert isinstance(output, dict) and {"case_id", "answer", "confidence"} <= set(output)


def test_an_otlp_write_back_to_phoenix_names_the_phoenix_write_back(
    result: dict[str, Any],
) -> None:
    assert result["otlp_returncode"] == 4
    assert "takes no OTLP logs" in result["otlp_stderr"]
    assert "--write-back phoenix" in result["otlp_stderr"]


def test_a_trace_phoenix_does_not_have_is_an_error_after_the_report(
    result: dict[str, Any],
) -> None:
    assert result["missing_returncode"] == 4
    assert "do not exist" in result["missing_stderr"]
    assert result["missing_report_written"]
