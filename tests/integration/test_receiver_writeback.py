"""The write-back loop with the project's own receiver: verdicts come back on the original spans.

Two apps export their traces over OTLP/HTTP to ``groundtrace collect serve`` running as its own
process (127.0.0.1, stopped by its pid): the tool-using docs agent and the small HotpotQA RAG
app (against the local OpenAI-compatible test server). ``paths`` and ``gate run`` analyse the
agent's traces, ``judge run`` the RAG app's, all three reading the receiver's store and writing
their per-case results back to the same receiver with ``--write-back otlp``. Reading the store
again must give each original trace its evaluations (name, score or label, explanation) on the
span each evaluates (the root span for paths and gate, the answering LLM call for the judge,
with its gen_ai.response.id), exactly as the analyses reported them; running all three a
second time sends the same records again (OTLP has no update), and the reader keeps one of each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.analyzer.interventions._verdicts import role_score
from groundtrace.analyzer.writeback import Verdict, export_otlp
from groundtrace.collectors import ReadReport, Trace, read_traces
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.examples.agent_docs.app import run as run_agent
from groundtrace.sdk import semconv as sc
from tests.collectors.receiver.test_receiver_process import ServeProcess
from tests.integration.phoenix_scenario import send_traces
from tests.integration.test_hostile_receiver import _clean_config  # noqa: F401 (autouse)
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]
AGENT_CASES = EXAMPLE_DIR / "cases.jsonl"
#: Generous on a loaded 2-core machine; each analysis takes seconds alone.
CLI_TIMEOUT_S = 300
#: Path statuses and gate decisions that need no reasons.
PASSING = frozenset({"pass", "not_required", "promote"})
#: The documented scores of label-only verdicts (docs/ci.md), written out independently.
GATE_SCORES = {"promote": 1.0, "manual_review": 0.5, "block": 0.0, "not_evaluable": None}
PATH_SCORES = {"pass": 1.0, "not_required": None, "not_applicable": None}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI without any ``GROUNDTRACE_*`` / ``OTEL_*`` variable of the test's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False, env=env
    )


def analyses(store: Path, endpoint: str, out: Path) -> list[int]:
    """paths and gate on the agent's traces, judge on the RAG app's; all written back."""
    back = ["--write-back", "otlp", "--otlp-endpoint", endpoint]
    runs = [
        cli("paths", str(store), "--cases", str(AGENT_CASES), "--tools-config",
            str(EXAMPLE_DIR / "tools.toml"), "--out", str(out / "paths"), "--resamples", "200",
            *back),
        cli("gate", "run", "--baseline", str(store), "--candidate", str(store), "--cases",
            str(AGENT_CASES), "--out", str(out / "gate"), *back),
        cli("judge", "run", str(store), "--out", str(out / "judge"), *back),
    ]  # fmt: skip
    for run in runs:
        assert "write-back: " in run.stderr, run.stderr[-2000:]
    return [run.returncode for run in runs]


def stored(store: Path) -> dict[str, Trace]:
    report = ReadReport()
    traces = {t.trace_id: t for t in read_traces([str(store)], report=report)}
    assert report.ok, report.errors[:5]
    return traces


def root(trace: Trace) -> str:
    return next(s.span_id for s in trace.steps if s.parent_span_id is None)


def read_back(traces: dict[str, Trace]) -> set[tuple[Any, ...]]:
    return {
        (tid, e.span_id, e.name, e.score_value, e.score_label, e.explanation, e.error_type)
        for tid, t in traces.items()
        for e in t.evaluations
    }


def roles_on_one_span(traces: dict[str, Trace]) -> list[Verdict]:
    """A helpful and a harmful role on two documents of one retrieval span of a RAG trace."""
    for trace in sorted(traces.values(), key=lambda t: t.trace_id):
        for step in sorted({e.step_span_id for e in trace.evidence}):
            documents = [e.id for e in trace.evidence if e.step_span_id == step]
            if len(documents) < 2:
                continue
            return [
                Verdict(
                    trace.trace_id,
                    step,
                    sc.GT_EVALUATION_EVIDENCE_ROLE,
                    case_id=trace.request.case_id,
                    label=label,
                    score=role_score(label),
                    evidence_id=documents[position],
                    document_position=position,
                )
                for position, label in ((0, "constructive"), (1, "distracting"))
            ]
    raise AssertionError("no retrieval span with two documents")


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("loop")
    store = work / "store"
    server = ServeProcess(store)
    try:
        base = server.endpoint.removesuffix("/v1/traces")
        provider = TracerProvider(resource=Resource.create({sc.SERVICE_NAME: "agent-docs"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=server.endpoint)))
        run_agent(tracer_provider=provider)
        provider.shutdown()
        cases = send_traces(base, HOTPOT, InMemorySpanExporter())
        before = stored(store)
        first = analyses(store, base, work / "first")
        after_first = stored(store)
        second = analyses(store, base, work / "second")
        after_second = stored(store)
        roles = roles_on_one_span(after_second)
        export_otlp(roles, base)
        after_roles = stored(store)
        assert server.stop(signal.SIGTERM) == 0
    finally:
        server.kill_if_running()
    return {
        "work": work, "before": before, "first": after_first, "second": after_second,
        "roles": roles, "after_roles": after_roles,
        "codes": [first, second], "rag_cases": [c["_id"] for c in cases],
    }  # fmt: skip


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_each_trace_gets_back_what_each_analysis_reported(loop: dict[str, Any]) -> None:
    assert loop["codes"][0] == loop["codes"][1]
    assert loop["codes"][0][0] == 0 and loop["codes"][0][2] == 0  # paths, judge
    before, after = loop["before"], loop["first"]
    assert not read_back(before)
    assert set(after) == set(before)  # no trace was lost or split by the records sent back
    by_case = {t.request.case_id: t for t in after.values()}
    out = loop["work"] / "first"
    expected: set[tuple[Any, ...]] = set()
    for case in _json(out / "paths" / "report.json")["cases"]:
        trace = by_case[case["id"]]
        score = PATH_SCORES.get(case["status"], 0.0)  # every other status is a failure
        expected.add(
            (trace.trace_id, root(trace), sc.GT_EVALUATION_PATH_STATUS, case["status"], score)
        )
    for case in _json(out / "gate" / "report.json")["cases"]:
        trace = by_case[case["case_id"]]
        score = GATE_SCORES[case["decision"]]
        expected.add(
            (trace.trace_id, root(trace), sc.GT_EVALUATION_GATE_CASE, case["decision"], score)
        )
    judged = [json.loads(line) for line in (out / "judge" / "judgments.jsonl").open()]
    assert {j["case_id"] for j in judged} >= set(loop["rag_cases"])
    scores: set[tuple[Any, ...]] = set()
    for row in judged:  # on the LLM call that answered, with its response id
        trace = by_case[row["case_id"]]
        llms = [s for s in trace.steps if s.action == sc.Action.LLM.value]
        if not llms:  # the agent answers without an LLM call: on its (last) ANSWER step
            answer = [s for s in trace.steps if s.action == sc.Action.ANSWER.value][-1]
            assert row["case_id"] not in loop["rag_cases"]
        for metric, score in row["scores"].items():
            target = llms[0].span_id if llms else answer.span_id
            scores.add((trace.trace_id, target, f"{sc.GT_EVALUATION_JUDGE}.{metric}", score))
        if llms:
            (llm,) = llms
            assert {e.response_id for e in trace.evaluations if e.span_id == llm.span_id} == {
                llm.attributes[sc.GENAI_RESPONSE_ID]
            }
    got = read_back(after)
    judge = f"{sc.GT_EVALUATION_JUDGE}."
    # label-only verdicts come back with their score: a failed path does not read as a pass
    labelled = {(t, s, n, label, v) for t, s, n, v, label, _x, _e in got if not n.startswith(judge)}
    scored = {(t, s, n, value) for t, s, n, value, _l, _x, _e in got if n.startswith(judge)}
    assert labelled == expected
    assert {v for *_rest, v in expected} >= {0.0, 1.0}  # passes and failures both present
    assert scored == scores and scores
    failing = {(t, s, n) for t, s, n, label, _v in expected if label not in PASSING}
    explained = {(t, s, n) for t, s, n, _v, _l, x, _e in got if x}
    assert failing and failing <= explained  # every path or gate failure comes with its reasons


def test_a_rerun_reads_back_one_record_of_each(loop: dict[str, Any]) -> None:
    first, second = loop["first"], loop["second"]
    assert read_back(second) == read_back(first)
    for trace_id, trace in second.items():
        assert len(trace.evaluations) == len(set(trace.evaluations))
        assert trace.evaluations == first[trace_id].evaluations


def test_two_roles_on_one_retrieval_span_come_back_apart(loop: dict[str, Any]) -> None:
    roles, traces = loop["roles"], loop["after_roles"]
    (trace_id,) = {v.trace_id for v in roles}
    (span,) = {v.span_id for v in roles}
    on_span = [e for e in traces[trace_id].evaluations if e.span_id == span]
    got = {
        (e.name, e.evidence_id, e.document_position, e.score_label, e.score_value) for e in on_span
    }
    assert got == {(v.name, v.evidence_id, v.document_position, v.label, v.score) for v in roles}
    assert {e.score_value for e in on_span} == {1.0, 0.0}
    documents = [e.id for e in traces[trace_id].evidence if e.step_span_id == span]
    assert all(documents[e.document_position or 0] == e.evidence_id for e in on_span)
    others = {t: tr.evaluations for t, tr in traces.items() if t != trace_id}
    assert others == {t: tr.evaluations for t, tr in loop["second"].items() if t != trace_id}
