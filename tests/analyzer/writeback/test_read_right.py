"""Verdicts that read right where they land: label-only verdicts carry a score on one scale
(each analysis says which of its labels passes), and a read-back keeps which document of a
retrieval span a document-level verdict concerns.

The read-back goes through the real OTLP encoding: the records ``export_otlp`` would send
(:func:`log_record`, encoded by the stock exporter's encoder) are stored as an OTLP protobuf
file beside the trace's spans and read with ``read_traces``. The round trips through the
project's receiver and through a real Phoenix are tests/integration/test_receiver_writeback.py
and tests/integration/test_phoenix_writeback.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf.internal.encoder import _VarintBytes
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from groundtrace.analyzer.gate import Decision
from groundtrace.analyzer.gate._verdicts import decision_score
from groundtrace.analyzer.interventions import Role
from groundtrace.analyzer.interventions._verdicts import role_score
from groundtrace.analyzer.judge._types import Judgment, Metric
from groundtrace.analyzer.judge._verdicts import judge_verdicts
from groundtrace.analyzer.paths import PathStatus
from groundtrace.analyzer.paths._verdicts import status_score
from groundtrace.analyzer.writeback import Target, Verdict
from groundtrace.analyzer.writeback._otlp import log_record
from groundtrace.analyzer.writeback._phoenix import phoenix_annotation
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.sdk import semconv as sc

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "collectors"
#: The RAG trace of this fixture retrieves d1 and d2 in one retrieval step.
RAG_SPANS = FIXTURES / "groundtrace.spans.jsonl"
RAG_TRACE = "0af7651916cd43dd8448eb211c80319c"
RETRIEVAL_SPAN = "0000000000000002"


def test_gate_decisions_score_passed_between_failed_and_not_evaluable_has_none() -> None:
    scores = {d.value: decision_score(d.value) for d in Decision}
    assert scores == {"promote": 1.0, "manual_review": 0.5, "block": 0.0, "not_evaluable": None}


def test_every_failed_path_status_scores_below_a_pass() -> None:
    scores = {s.value: status_score(s.value) for s in PathStatus}
    assert scores.pop("pass") == 1.0
    assert scores.pop("not_required") is None and scores.pop("not_applicable") is None
    assert scores and set(scores.values()) == {0.0}  # every other status is a failure


@pytest.mark.parametrize(
    ("label", "evaluable", "score"),
    [
        ("constructive", True, 1.0),
        ("corrective", True, 1.0),
        ("redundant", True, 0.5),
        ("none", True, 0.5),
        ("distracting", True, 0.0),
        ("confidence-distorting", True, 0.0),
        ("constructive,distracting", True, 0.0),  # a harmful role outweighs a helpful one
        ("constructive,redundant", False, 1.0),  # asserted roles count even if others are not
        ("none", False, None),  # no role asserted and some could not be evaluated: no verdict
    ],
)
def test_evidence_roles_score_by_harm_then_help(
    label: str, evaluable: bool, score: float | None
) -> None:
    assert role_score(label, evaluable=evaluable) == score


def test_every_role_has_a_side() -> None:
    scores = {r.value: role_score(r.value) for r in Role}
    assert scores == {
        "constructive": 1.0,
        "corrective": 1.0,
        "redundant": 0.5,
        "distracting": 0.0,
        "confidence-distorting": 0.0,
    }


def test_a_judge_score_is_not_relabelled() -> None:
    result = Judgment("q1", {Metric.ADHERENCE: 0.25, Metric.ANSWER_RELEVANCE: 0.75})
    linked = judge_verdicts([result], {"q1": RAG_TRACE}, {RAG_TRACE: Target("a1")}, 0.5)
    got = {(v.name, v.label, v.score) for v in linked.verdicts}
    assert got == {  # the measured score stays, a failing one is not scored 0.0
        (f"{sc.GT_EVALUATION_JUDGE}.adherence", "fail", 0.25),
        (f"{sc.GT_EVALUATION_JUDGE}.answer_relevance", "pass", 0.75),
    }


def _roles_on_one_span() -> list[Verdict]:
    verdicts = []
    for evidence_id, position, label in (("d1", 0, "constructive"), ("d2", 1, "distracting")):
        score = role_score(label)
        verdict = Verdict(
            RAG_TRACE, RETRIEVAL_SPAN, sc.GT_EVALUATION_EVIDENCE_ROLE, case_id="q1",
            label=label, score=score, evidence_id=evidence_id, document_position=position,
        )  # fmt: skip
        verdicts.append(verdict)
    return verdicts


def test_a_role_verdict_carries_its_document_and_score_to_phoenix_and_otlp() -> None:
    helpful, harmful = _roles_on_one_span()
    endpoint, annotation = phoenix_annotation(harmful)
    assert endpoint == "document_annotations" and annotation["document_position"] == 1
    assert annotation["result"] == {"label": "distracting", "score": 0.0}
    assert helpful.attributes()[sc.GENAI_EVALUATION_SCORE_VALUE] == 1.0
    assert harmful.attributes()[sc.GT_EVALUATION_DOCUMENT_POSITION] == 1


def test_two_roles_on_one_retrieval_span_are_told_apart_when_read_back(tmp_path: Path) -> None:
    resource = Resource.create({sc.SERVICE_NAME: "groundtrace-analyzer"})
    scope = InstrumentationScope("test")
    verdicts = _roles_on_one_span()
    message = encode_logs([log_record(v, resource, scope) for v in verdicts]).SerializeToString()
    logs = tmp_path / "evaluations.pb"
    logs.write_bytes(_VarintBytes(len(message)) + message)
    report = ReadReport()
    traces = {t.trace_id: t for t in read_traces([RAG_SPANS, logs], report=report)}
    assert report.ok, report.errors
    got = {
        (e.span_id, e.name, e.evidence_id, e.document_position, e.score_label, e.score_value)
        for e in traces[RAG_TRACE].evaluations
    }
    assert got == {
        (RETRIEVAL_SPAN, sc.GT_EVALUATION_EVIDENCE_ROLE, "d1", 0, "constructive", 1.0),
        (RETRIEVAL_SPAN, sc.GT_EVALUATION_EVIDENCE_ROLE, "d2", 1, "distracting", 0.0),
    }
    documents = [e.id for e in traces[RAG_TRACE].evidence if e.step_span_id == RETRIEVAL_SPAN]
    for evaluation in traces[RAG_TRACE].evaluations:  # each names the very document it is about
        assert evaluation.document_position is not None
        assert documents[evaluation.document_position] == evaluation.evidence_id
