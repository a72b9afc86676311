"""``--write-back``: per-case results reach the backend, linked to the original spans.

OTLP: a loopback OTLP/HTTP endpoint decodes the ExportLogsServiceRequest the stock exporter
sends. Phoenix: the request bodies and error mapping with httpx's mock transport (the round trip
against a real Phoenix, read back in Phoenix's views and with ``collect phoenix``, is
tests/integration/test_phoenix_writeback.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import WriteBackError
from groundtrace.analyzer.interventions._verdicts import role_score
from groundtrace.analyzer.writeback import Verdict, annotate_phoenix, root_spans
from groundtrace.analyzer.writeback._phoenix import phoenix_annotation
from groundtrace.collectors import ReadReport, Trace, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.examples.agent_docs.app import run as run_agent
from groundtrace.sdk import semconv as sc
from tests.analyzer.gate.test_gate_changes import gate_args, make_runs
from tests.support.otlp_logs_server import OTLPLogsServer

app = build_app()
JUDGE_TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "collectors"


@pytest.fixture(scope="module")
def gate_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("writeback"))


def _roots(path: Path) -> dict[str, str]:
    return root_spans(read_traces([str(path)], report=ReadReport()))


def _case_of(path: Path) -> dict[str, str]:
    return {
        t.request.case_id or "": t.trace_id for t in read_traces([str(path)], report=ReadReport())
    }


def test_gate_writes_each_case_decision_onto_the_candidate_root_span(gate_dir: Path) -> None:
    with OTLPLogsServer() as srv:
        result = CliRunner().invoke(
            app, [*gate_args(gate_dir, "wb"), "--write-back", "otlp", "--otlp-endpoint", srv.url]
        )
    assert result.exit_code == 20, result.output
    assert "write-back: 3 result(s)" in result.output
    roots, traces = _roots(gate_dir / "candidate"), _case_of(gate_dir / "candidate")
    by_case = {r["attributes"][sc.GT_EVALUATION_CASE_ID]: r for r in srv.records}
    assert set(by_case) == {"q1", "q2", "q3"}
    for case_id, record in by_case.items():
        assert record["event_name"] == sc.GENAI_EVENT_EVALUATION_RESULT
        assert record["trace_id"] == traces[case_id]
        assert record["span_id"] == roots[traces[case_id]]
        assert record["attributes"][sc.GENAI_EVALUATION_NAME] == sc.GT_EVALUATION_GATE_CASE
    q2 = by_case["q2"]["attributes"]
    assert q2[sc.GENAI_EVALUATION_SCORE_LABEL] == "block"
    assert q2[sc.GENAI_EVALUATION_EXPLANATION].startswith("new: deterministic.required_context")
    assert by_case["q3"]["attributes"][sc.GENAI_EVALUATION_EXPLANATION].startswith("known: ")
    q1 = by_case["q1"]["attributes"]
    assert q1[sc.GENAI_EVALUATION_SCORE_LABEL] == "promote"
    assert q1[sc.GENAI_EVALUATION_EXPLANATION] == "fixed: all checks passed"
    # a label-only verdict carries a score too: a blocked case does not chart as a promoted one
    assert q1[sc.GENAI_EVALUATION_SCORE_VALUE] == 1.0 and q2[sc.GENAI_EVALUATION_SCORE_VALUE] == 0.0
    assert by_case["q1"]["resource"][sc.SERVICE_NAME] == "groundtrace-analyzer"


def test_a_refused_export_fails_after_the_report_is_written(gate_dir: Path) -> None:
    with OTLPLogsServer(status=400) as srv:
        result = CliRunner().invoke(
            app,
            [*gate_args(gate_dir, "refused"), "--write-back", "otlp", "--otlp-endpoint", srv.url],
        )
    assert result.exit_code == 4, result.output
    assert srv.requests == 1
    assert f"OTLP export of 3 evaluation record(s) to {srv.url}/v1/logs failed" in result.output
    assert (gate_dir / "refused" / "report.json").is_file()
    assert (gate_dir / "refused" / "summary.md").is_file()


def test_paths_write_back_sends_each_status(tmp_path: Path) -> None:
    run_agent(tmp_path / "agent")
    traces = tmp_path / "agent" / "traces"
    with OTLPLogsServer() as srv:
        result = CliRunner().invoke(
            app,
            ["paths", str(traces), "--cases", str(EXAMPLE_DIR / "cases.jsonl"), "--tools-config",
             str(EXAMPLE_DIR / "tools.toml"), "--out", str(tmp_path / "p"), "--json",
             "--resamples", "200", "--write-back", "otlp", "--otlp-endpoint", srv.url],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    cases = json.loads(result.stdout)["cases"]
    roots = _roots(traces)
    sent = {r["attributes"][sc.GT_EVALUATION_CASE_ID]: r for r in srv.records}
    assert set(sent) == {c["id"] for c in cases if c["trace_id"]}
    assert len(sent) == len(list(read_cases(EXAMPLE_DIR / "cases.jsonl")))
    for case in cases:
        record = sent[case["id"]]
        assert record["span_id"] == roots[case["trace_id"]]
        assert record["attributes"][sc.GENAI_EVALUATION_NAME] == sc.GT_EVALUATION_PATH_STATUS
        assert record["attributes"][sc.GENAI_EVALUATION_SCORE_LABEL] == case["status"]
        score = record["attributes"].get(sc.GENAI_EVALUATION_SCORE_VALUE)
        unscored = case["status"] in {"not_required", "not_applicable"}
        assert score == (None if unscored else 1.0 if case["status"] == "pass" else 0.0)
    failing = [c for c in cases if c["status"] not in {"pass", "not_required"}]
    assert failing and any(c["status"] == "pass" for c in cases)
    assert all(sc.GENAI_EVALUATION_EXPLANATION in sent[c["id"]]["attributes"] for c in failing)


def _judge_written_back(spans: Path, out: Path) -> list[dict[str, Any]]:
    """``judge run`` of ``spans`` into ``out`` with ``--write-back otlp``: the records sent."""
    with OTLPLogsServer() as srv:
        result = CliRunner().invoke(
            app,
            ["judge", "run", str(spans), "--out", str(out), "--write-back", "otlp",
             "--otlp-endpoint", srv.url],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return srv.records


def test_judge_run_write_back_sends_scores_per_metric(tmp_path: Path) -> None:
    spans = JUDGE_TRACES / "groundtrace.spans.jsonl"
    records = _judge_written_back(spans, tmp_path / "j")
    judged = [json.loads(line) for line in (tmp_path / "j" / "judgments.jsonl").open()]
    expected = {
        (j["case_id"], f"{sc.GT_EVALUATION_JUDGE}.{m}", s)
        for j in judged
        for m, s in j["scores"].items()
    }
    got = {
        (
            r["attributes"][sc.GT_EVALUATION_CASE_ID],
            r["attributes"][sc.GENAI_EVALUATION_NAME],
            r["attributes"].get(sc.GENAI_EVALUATION_SCORE_VALUE),
        )
        for r in records
        if sc.ERROR_TYPE not in r["attributes"]
    }
    assert got == expected and expected
    errors = [r for r in records if sc.ERROR_TYPE in r["attributes"]]
    assert len(errors) == sum(len(j["errors"]) for j in judged)
    assert all(r["attributes"][sc.GENAI_EVALUATION_SCORE_LABEL] == "protocol_error" for r in errors)
    traces = {t.trace_id: t for t in read_traces([str(spans)], report=ReadReport())}
    for record in records:  # on the ANSWER step (no LLM call below it here), not the root
        trace = traces[record["trace_id"]]
        step = next(s for s in trace.steps if s.span_id == record["span_id"])
        assert step.action == sc.Action.ANSWER.value


def _rag_traces(path: Path) -> list[Trace]:
    """The small RAG app's traces (an ANSWER step calling an OpenAI-compatible LLM)."""
    from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
    from tests.integration.phoenix_scenario import send_traces
    from tests.support.data import HOTPOT

    exporter = OTLPJsonFileExporter(path)
    send_traces(None, HOTPOT, exporter)
    return list(read_traces([str(path)], report=ReadReport()))


def test_judge_scores_go_to_the_llm_call_with_its_response_id(tmp_path: Path) -> None:
    spans = tmp_path / "rag.jsonl"
    traces = {t.trace_id: t for t in _rag_traces(spans)}
    assert len(traces) == 3
    records = _judge_written_back(spans, tmp_path / "j")
    assert len(records) == 3 * 3  # three metrics per trace
    for record in records:
        trace = traces[record["trace_id"]]
        (llm,) = [s for s in trace.steps if s.action == sc.Action.LLM.value]
        assert record["span_id"] == llm.span_id
        response_id = llm.attributes[sc.GENAI_RESPONSE_ID]
        assert isinstance(response_id, str) and response_id.startswith("chatcmpl-")
        assert record["attributes"][sc.GENAI_RESPONSE_ID] == response_id
    from groundtrace.analyzer.writeback import answer_spans

    targets = answer_spans(traces.values())
    assert {t.span_id for t in targets.values()} == {r["span_id"] for r in records}


def _phoenix(handler: Any) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_phoenix_annotations_go_where_phoenix_shows_them_and_refusals_are_errors() -> None:
    bodies: list[tuple[str, dict[str, Any]]] = []

    def accept(request: httpx.Request) -> httpx.Response:
        assert request.url.params["sync"] == "true"
        bodies.append((request.url.path, json.loads(request.content)))
        return httpx.Response(200, json={"data": [{"id": "x"}]})

    gate = Verdict(
        "ab" * 16, "cd" * 8, sc.GT_EVALUATION_GATE_CASE, case_id="q1", label="block",
        explanation="new: deterministic.answer fail",
    )  # fmt: skip
    judge = Verdict(
        "ab" * 16, "ef" * 8, f"{sc.GT_EVALUATION_JUDGE}.answer_relevance", case_id="q1",
        label="pass", score=0.75, response_id="chatcmpl-1",
    )  # fmt: skip
    role = Verdict(
        "ab" * 16, "12" * 8, sc.GT_EVALUATION_EVIDENCE_ROLE, case_id="q1", label="necessary",
        evidence_id="p3", document_position=2,
    )  # fmt: skip
    assert annotate_phoenix([gate, judge, role], "http://phoenix.test/", client=_phoenix(accept))
    assert [path for path, _ in bodies] == ["/v1/trace_annotations", "/v1/document_annotations"]
    gate_annotation, judge_annotation = bodies[0][1]["data"]
    assert gate_annotation == {
        "trace_id": "ab" * 16,
        "name": "gate",
        "annotator_kind": "CODE",
        "result": {"label": "block", "explanation": "new: deterministic.answer fail"},
        "metadata": {
            "source": "groundtrace", "evaluation": sc.GT_EVALUATION_GATE_CASE,
            "case_id": "q1", "trace_id": "ab" * 16, "span_id": "cd" * 8,
        },
        "identifier": "groundtrace:q1",
    }  # fmt: skip
    assert judge_annotation["name"] == "answer_relevance"
    assert judge_annotation["result"] == {"label": "pass", "score": 0.75}
    assert judge_annotation["metadata"]["response_id"] == "chatcmpl-1"
    (document,) = bodies[1][1]["data"]
    assert document["span_id"] == "12" * 8 and document["document_position"] == 2
    assert document["name"] == "role" and "identifier" not in document  # Phoenix takes none
    assert document["metadata"]["evidence_id"] == "p3"
    # an evidence item whose position is unknown stays on its retrieval span
    unplaced = Verdict("ab" * 16, "12" * 8, sc.GT_EVALUATION_EVIDENCE_ROLE, evidence_id="p9")
    assert phoenix_annotation(unplaced)[0] == "span_annotations"

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"detail": "Traces with IDs abab do not exist."})

    with pytest.raises(WriteBackError, match=r"refused 1 trace annotation\(s\) \(HTTP 404\).*abab"):
        annotate_phoenix([gate], "http://phoenix.test", client=_phoenix(refuse))

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(WriteBackError, match="unreachable"):
        annotate_phoenix([gate], "http://phoenix.test", client=_phoenix(unreachable))


def test_the_three_judge_metrics_have_short_distinct_names_in_phoenix() -> None:
    from groundtrace.analyzer.judge import Metric

    names = [
        phoenix_annotation(Verdict("ab" * 16, "cd" * 8, f"{sc.GT_EVALUATION_JUDGE}.{m.value}"))[1][
            "name"
        ]
        for m in Metric
    ]
    shown = {name[:12] for name in names}  # what Phoenix's UI leaves of a name
    assert len(shown) == len(names) == 3


def test_interventions_write_back_puts_roles_on_the_retrieval_span(tmp_path: Path) -> None:
    from groundtrace.analyzer.demo import DemoConfig, run_demo
    from tests.support.data import HOTPOT

    demo = tmp_path / "demo"
    run_demo(DemoConfig(model="lexical", questions=2, out=demo, dataset=HOTPOT))
    with OTLPLogsServer() as srv:
        result = CliRunner().invoke(
            app,
            ["interventions", str(demo / "traces"), "--cases", str(demo / "cases.jsonl"),
             "--pool-dataset", str(HOTPOT), "--out", str(tmp_path / "iv"), "--json",
             "--concurrency", "1", "--write-back", "otlp", "--otlp-endpoint", srv.url],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    traces = {t.trace_id: t for t in read_traces([str(demo / "traces")], report=ReadReport())}
    rows = [json.loads(line) for line in (tmp_path / "iv" / "results.jsonl").open()]
    targets = {(r["trace_id"], r["target_id"]) for r in rows if r["operator"] == "REMOVE"}
    assert len(srv.records) == len(targets) == 2
    for record in srv.records:
        attrs = record["attributes"]
        assert attrs[sc.GENAI_EVALUATION_NAME] == sc.GT_EVALUATION_EVIDENCE_ROLE
        evidence_id = attrs[sc.GT_EVALUATION_EVIDENCE_ID]
        assert (record["trace_id"], evidence_id) in targets
        trace = traces[record["trace_id"]]
        step = next(e.step_span_id for e in trace.evidence if e.id == evidence_id)
        assert record["span_id"] == step
        position = [e.id for e in trace.evidence if e.step_span_id == step].index(evidence_id)
        assert attrs[sc.GT_EVALUATION_EVIDENCE_ID] == evidence_id and position >= 0
        assert attrs[sc.GT_EVALUATION_CASE_ID] == trace.request.case_id
        assert attrs[sc.GENAI_EVALUATION_SCORE_LABEL]  # roles, or "none"
        assert attrs[sc.GT_EVALUATION_DOCUMENT_POSITION] == position
        assert attrs.get(sc.GENAI_EVALUATION_SCORE_VALUE) == role_score(
            str(attrs[sc.GENAI_EVALUATION_SCORE_LABEL]),
            evaluable=sc.GENAI_EVALUATION_EXPLANATION not in attrs,
        )
