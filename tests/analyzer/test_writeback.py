"""``--write-back``: per-case results reach the backend, linked to the original spans.

OTLP: a loopback OTLP/HTTP endpoint decodes the ExportLogsServiceRequest the stock exporter
sends. Phoenix: the request body and error mapping with httpx's mock transport (the round trip
against a real Phoenix is tests/integration/test_phoenix_writeback.py).
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
from groundtrace.analyzer.writeback import Verdict, annotate_phoenix, root_spans
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.examples.agent_docs.app import run as run_agent
from groundtrace.sdk import semconv as sc
from tests.analyzer.test_gate_changes import gate_args, make_runs
from tests.support.otlp_logs_server import OTLPLogsServer

app = build_app()
JUDGE_TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "collectors"


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
    failing = [c for c in cases if c["status"] not in {"pass", "not_required"}]
    assert failing
    assert all(sc.GENAI_EVALUATION_EXPLANATION in sent[c["id"]]["attributes"] for c in failing)


def test_judge_run_write_back_sends_scores_per_metric(tmp_path: Path) -> None:
    spans = JUDGE_TRACES / "groundtrace.spans.jsonl"
    with OTLPLogsServer() as srv:
        result = CliRunner().invoke(
            app,
            ["judge", "run", str(spans), "--out", str(tmp_path / "j"), "--write-back", "otlp",
             "--otlp-endpoint", srv.url],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
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
        for r in srv.records
        if sc.ERROR_TYPE not in r["attributes"]
    }
    assert got == expected and expected
    errors = [r for r in srv.records if sc.ERROR_TYPE in r["attributes"]]
    assert len(errors) == sum(len(j["errors"]) for j in judged)
    assert all(r["attributes"][sc.GENAI_EVALUATION_SCORE_LABEL] == "protocol_error" for r in errors)
    roots = _roots(spans)
    assert all(r["span_id"] == roots[r["trace_id"]] for r in srv.records)


def _phoenix(handler: Any) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_phoenix_annotations_carry_an_identifier_and_refusals_are_errors() -> None:
    bodies: list[dict[str, Any]] = []

    def accept(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/span_annotations"
        assert request.url.params["sync"] == "true"
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={"data": [{"id": "x"}]})

    verdict = Verdict(
        "ab" * 16, "cd" * 8, sc.GT_EVALUATION_GATE_CASE, case_id="q1", label="block",
        explanation="new: deterministic.answer fail",
    )  # fmt: skip
    assert annotate_phoenix([verdict], "http://phoenix.test/", client=_phoenix(accept)) == 1
    (annotation,) = bodies[0]["data"]
    assert annotation == {
        "span_id": "cd" * 8,
        "name": sc.GT_EVALUATION_GATE_CASE,
        "annotator_kind": "CODE",
        "result": {"label": "block", "explanation": "new: deterministic.answer fail"},
        "metadata": {"case_id": "q1", "trace_id": "ab" * 16},
        "identifier": "groundtrace:q1",
    }

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"detail": "Spans with IDs cdcd do not exist."})

    with pytest.raises(WriteBackError, match=r"refused 1 span annotation\(s\) \(HTTP 404\).*cdcd"):
        annotate_phoenix([verdict], "http://phoenix.test", client=_phoenix(refuse))

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(WriteBackError, match="unreachable"):
        annotate_phoenix([verdict], "http://phoenix.test", client=_phoenix(unreachable))


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
        assert attrs[sc.GT_EVALUATION_CASE_ID] == trace.request.case_id
        assert attrs[sc.GENAI_EVALUATION_SCORE_LABEL]  # roles, or "none"
