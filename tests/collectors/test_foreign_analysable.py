"""An app traced ONLY by OpenLLMetry's LangChain instrumentation reads as an analysable
trace: the question and the answer of its workflow root (the LangChain run's ``inputs`` /
``outputs``), the retrieved documents of its ``vector_db_retrieve`` span (ids from each
document's metadata), and ``groundtrace judge run`` judges every one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.collectors import Trace, read_traces
from tests.support.foreign_rag import CASES, CHUNKS, openllmetry_langchain_app

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def traces_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return openllmetry_langchain_app(tmp_path_factory.mktemp("openllmetry") / "spans.pb")


def test_workflow_root_and_retriever_span_are_read(traces_file: Path) -> None:
    traces: list[Trace] = sorted(read_traces([str(traces_file)]), key=lambda t: t.steps[0].start_ns)
    texts = dict(CHUNKS)
    assert [t.request.query for t in traces] == [q for _, q, _, _ in CASES]
    assert [t.answer for t in traces] == [texts[gold] + "." for _, _, gold, _ in CASES]
    for trace in traces:
        assert not trace.findings_of("no_query") and not trace.findings_of("no_retrieval")
        (retrieve,) = [s for s in trace.steps if s.action == "RETRIEVE"]
        assert retrieve.convention == "traceloop"
        assert len(trace.evidence) == 3
        for item in trace.evidence:
            assert item.id is not None and item.content == texts[item.id]
            assert item.step_span_id == retrieve.span_id


def test_judge_run_judges_every_trace(traces_file: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        build_app(),
        ["judge", "run", str(traces_file), "--judge", "lexical", "--out", str(tmp_path), "--json"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (summary["cases"], summary["not_judgeable"]) == (len(CASES), [])
    assert summary["metrics"]["adherence"]["scored"] == len(CASES)
