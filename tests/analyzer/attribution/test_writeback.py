"""``--write-back``: each evidence item's attribution goes to the retrieval span that returned
it, as an OTLP ``gen_ai.evaluation.result`` record (tested against a loopback OTLP/HTTP logs
endpoint) and as a Phoenix document annotation (its request body; the live Phoenix tests of
``tests/integration`` do not run this analysis). Scored by the loopback endpoint tier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.attribution._shape import AttributionResult, SourceScore
from groundtrace.analyzer.attribution._shape import TraceAttribution as Row
from groundtrace.analyzer.attribution._verdicts import attribution_verdicts, document_scores
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.writeback._phoenix import phoenix_annotation
from groundtrace.collectors import Trace
from groundtrace.collectors.model import Evidence, LLMCall, Message, Request
from groundtrace.sdk import semconv as sc
from tests.analyzer.attribution.test_analysis import PAGES
from tests.support.otlp_logs_server import OTLPLogsServer

pytestmark = pytest.mark.timeout(120)


def _trace(n: int, answer: str, shown: tuple[str, ...]) -> Trace:
    """A trace with OTLP ids: its retrieval step ``n``0, its answer call ``n``1."""
    prompt = "Evidence:\n" + "\n".join(f"[{i}] {PAGES[i]}" for i in shown) + "\nQuestion?"
    step = f"{n:015x}0"
    return Trace(
        request=Request(trace_id=f"{n:032x}", case_id=f"case-{n}"),
        evidence=tuple(
            Evidence(i, step, "RETRIEVE", rank=r, content=PAGES[i]) for r, i in enumerate(shown, 1)
        ),
        answer=answer,
        llm_calls=(LLMCall(f"{n:015x}1", messages=(Message("user", prompt),),
                           output_text=answer),),
    )  # fmt: skip


def test_each_items_score_is_written_back_on_its_retrieval_span(tmp_path: Path, url: str) -> None:
    traces = tmp_path / "traces.jsonl"
    made = [_trace(1, "twelve metres", ("p1", "p2", "p3")), _trace(2, "south quay barge",
            ("p3", "p1"))]  # fmt: skip
    traces.write_text("".join(t.to_json() + "\n" for t in made))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"traces": [str(traces)], "endpoint": url}))
    app = build_app()
    sent = {}
    for command in ("attribution", "analyze"):
        out = tmp_path / command
        with OTLPLogsServer() as srv:
            back = ("--write-back", "otlp", "--otlp-endpoint", srv.url)
            args = (
                ["attribution", str(traces), "--endpoint", url]
                if command == "attribution"
                else ["analyze", "attribution", "--config", str(config)]
            )
            res = CliRunner().invoke(app, [*args, "--out", str(out), *back])
        assert res.exit_code == 0, res.output
        sent[command] = srv.records
    assert sent["attribution"] == sent["analyze"]
    rows = json.loads((tmp_path / "attribution" / "attribution.json").read_text())["rows"]
    expected = {
        (r["trace_id"], s["id"]): s["score"] for r in rows for s in r["sources"]
    }  # fmt: skip
    records = sent["attribution"]
    assert len(records) == len(expected) == 5
    for record in records:
        attrs = record["attributes"]
        item = attrs[sc.GT_EVALUATION_EVIDENCE_ID]
        assert attrs[sc.GENAI_EVALUATION_NAME] == sc.GT_EVALUATION_EVIDENCE_ATTRIBUTION
        assert attrs[sc.GENAI_EVALUATION_SCORE_VALUE] == expected[record["trace_id"], item]
        n = int(record["trace_id"], 16)
        assert record["span_id"] == f"{n:015x}0"  # the retrieval step, not the answer call
        shown = ("p1", "p2", "p3") if n == 1 else ("p3", "p1")
        assert attrs[sc.GT_EVALUATION_DOCUMENT_POSITION] == shown.index(item)
    top = [r for r in records if "rank 1 of 3" in r["attributes"][sc.GENAI_EVALUATION_EXPLANATION]]
    assert [r["attributes"][sc.GT_EVALUATION_EVIDENCE_ID] for r in top] == ["p2"]


def test_a_hierarchical_rows_sentences_are_summed_per_document_and_annotated_in_phoenix() -> None:
    trace = _trace(1, "twelve metres", ("p1", "p2"))
    row = Row(
        trace_id=trace.trace_id, case_id="case-1", answer="twelve metres", tier="endpoint",
        method="hierarchical", passes=5, full=-1.0, context_gap=0.5,
        sources=(SourceScore("p1#0", 0.25, "a"), SourceScore("p1#1", 0.5, "b"),
                 SourceScore("p2#0", 2.0, "c"), SourceScore("x", 1.0, "d")),
    )  # fmt: skip
    assert document_scores(row) == {"p1": 0.75, "p2": 2.0, "x": 1.0}
    linked = attribution_verdicts(AttributionResult(rows=(row,)), [trace])
    assert linked.unlinked == (f"{trace.trace_id}:x",)  # no evidence item has that id
    first = linked.verdicts[0]
    assert "does not depend on its context" in (first.explanation or "")
    endpoint, body = phoenix_annotation(first)
    assert endpoint == "document_annotations" and body["name"] == "attribution"
    assert (body["span_id"], body["document_position"]) == (f"{1:015x}0", 0)
    assert body["result"] == {"score": 0.75, "explanation": first.explanation}
