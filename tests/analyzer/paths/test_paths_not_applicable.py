"""``paths`` on an app without tool calls says "not applicable: no tool calls", never failures.

The app is a RAG service about pottery kilns (a domain the repository has no other data of):
it retrieves chunks with its own retriever and cites their ids, and it calls no tool. Its
citations are not a command path: before, every cited chunk was an ``invalid_quote`` (or a
``zero_call_citation``) and every correct answer a masked failure, exit 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cases import parse_case
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.paths import PathStatus, write_report
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors.model import Evidence, Request, ToolCall, Trace
from tests.analyzer.paths.checking import validate

#: (case id, question, gold chunk id, the chunk's text -- the reference answer)
KILN: tuple[tuple[str, str, str, str], ...] = (
    ("bisque", "What cone is bisque fired to?", "kiln-07", "cone 04"),
    ("cooling", "How long should a glaze kiln cool?", "kiln-12", "at least 24 hours"),
    ("vents", "When are the kiln vents closed?", "kiln-03", "after 1000 F"),
)
SETTINGS = StatsSettings(n_resamples=200, seed=7)


def rag_trace(i: int, case_id: str, chunk: str, answer: str) -> Trace:
    return Trace(
        request=Request(trace_id=f"{i + 1:032x}", case_id=case_id, query=case_id),
        evidence=(Evidence(id=chunk, step_span_id="r", stage="retrieve", rank=1, content=answer),),
        selected_ids=(chunk,),
        answer=answer,
        cited_ids=(chunk,),
    )


def rag_cases() -> list[Any]:
    return [
        parse_case({"id": c, "question": q, "answer": a, "support_titles": [g]})
        for c, q, g, a in KILN
    ]


def rag_traces() -> list[Trace]:
    return [rag_trace(i, c, g, a) for i, (c, _, g, a) in enumerate(KILN)]


def test_rag_traces_without_tool_calls_are_not_applicable_never_failures() -> None:
    report = validate(rag_traces(), rag_cases(), settings=SETTINGS)
    assert [v.status for v in report.verdicts] == [PathStatus.NOT_APPLICABLE] * 3
    assert all(v.path_pass is None and v.issues == () for v in report.verdicts)
    assert report.verdicts[0].details["not_applicable"] == "no tool calls"
    assert report.verdicts[0].text_correct is True  # the text channel is still scored
    m = report.metrics
    assert m.masked_failures == () and m.status_counts == {"not_applicable": 3}
    assert m.path_pass_rate.value is None
    assert report.not_applicable == 3
    assert report.nothing_measured is not None
    assert report.nothing_measured.startswith("not applicable: no tool calls")


def test_applicable_cases_are_still_checked_next_to_inapplicable_ones() -> None:
    traces = rag_traces()
    # one trace of an agent that read a document with a tool and cited another
    read = ToolCall(span_id="t", name="read", status="ok", paths_read=("kiln-01",))
    traces[0] = Trace(
        request=traces[0].request, answer="cone 04", cited_ids=("kiln-07",), tool_calls=(read,)
    )
    report = validate(traces, rag_cases(), settings=SETTINGS)
    assert [v.status.value for v in report.verdicts] == [
        "invalid_quote", "not_applicable", "not_applicable",
    ]  # fmt: skip
    assert report.metrics.masked_failures == ("bisque",)
    assert report.metrics.path_pass_rate.n == 1
    assert report.not_applicable == 2 and report.nothing_measured is None
    # a case that requires a read is checked even when no tool ran
    required = parse_case({"id": "vents", "answer": "after 1000 F", "required_reads": ["k"]})
    (verdict,) = validate([rag_traces()[2]], [required], settings=SETTINGS).verdicts
    assert verdict.status is PathStatus.ZERO_CALL_CITATION  # and missing_command


def test_reports_say_not_applicable_per_case_and_overall(tmp_path: Path) -> None:
    report = validate(rag_traces(), rag_cases(), settings=SETTINGS)
    write_report(report, tmp_path)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "**Nothing measured**: not applicable: no tool calls" in summary
    assert "not applicable (no tool calls)" in summary  # the reading
    assert "most frequent failure" not in summary
    assert "Masked failures" not in summary and "Every path failure" not in summary
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count("not applicable: no tool calls") >= 4  # overall + one per case
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["not_applicable"] == 3
    assert data["nothing_measured"].startswith("not applicable: no tool calls")
    assert {c["status"] for c in data["cases"]} == {"not_applicable"}


def _tau_lines(path: Path, traces: list[Trace]) -> Path:
    path.write_text("".join(t.to_json() + "\n" for t in traces), encoding="utf-8")
    return path


def _cases_file(path: Path) -> Path:
    rows = [{"id": c, "question": q, "answer": a, "support_titles": [g]} for c, q, g, a in KILN]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_cli_exits_nothing_measured_with_the_reason_on_screen(tmp_path: Path) -> None:
    traces = _tau_lines(tmp_path / "kiln.jsonl", rag_traces())
    cases = _cases_file(tmp_path / "cases.jsonl")
    out = tmp_path / "paths"
    result = CliRunner().invoke(
        build_app(),
        ["paths", str(traces), "--cases", str(cases), "--out", str(out), "--resamples", "200"],
    )
    assert result.exit_code == 6, result.output
    flat = " ".join(result.output.split())
    assert "nothing measured: not applicable: no tool calls" in flat
    assert "Masked failures (text correct" not in flat and "path failure(s)" not in flat
    assert json.loads((out / "report.json").read_text())["not_applicable"] == 3


def test_cli_exits_nothing_measured_when_no_trace_has_a_case(tmp_path: Path) -> None:
    other = [rag_trace(9, "elsewhere", "kiln-01", "x")]
    result = CliRunner().invoke(
        build_app(),
        ["paths", str(_tau_lines(tmp_path / "t.jsonl", other)), "--cases",
         str(_cases_file(tmp_path / "c.jsonl")), "--out", str(tmp_path / "p"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 6, result.output
    assert "no trace carries a case id of the case file (1 trace(s) read, 3 case(s))" in " ".join(
        result.output.split()
    )


APP = """
import sys

import groundtrace.sdk as gt

gt.configure(service_name="kiln-help", exporter="file", file_path=sys.argv[1],
             capture_content=True)
CHUNKS = [
    {"id": "kiln-07", "title": "Bisque", "content": "bisque ware is fired to cone 04"},
    {"id": "kiln-12", "title": "Cooling", "content": "a glaze kiln must cool at least 24 hours"},
    {"id": "kiln-03", "title": "Vents", "content": "close the kiln vents after 1000 F"},
]


@gt.retrieve(retriever="overlap", k=2)
def search(question: str) -> list[dict]:
    words = set(question.lower().split())
    return sorted(CHUNKS, key=lambda c: -len(words & set(c["content"].split())))[:2]


@gt.answer()
def respond(question: str, evidence: list[dict]) -> dict:
    best = evidence[0]
    return {"answer": best["content"], "confidence": 0.8, "used_chunks": [best["id"]]}


@gt.request(app_name="kiln-help", app_version="1")
def handle(question: str, case_id: str | None = None) -> str:
    return respond(question, search(question))["answer"]


for case_id, question in [("bisque", "what cone is bisque ware fired to"),
                          ("cooling", "how long must a glaze kiln cool"),
                          ("vents", "when do I close the kiln vents")]:
    handle(question, case_id=case_id)
gt.shutdown()
"""


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_an_sdk_rag_app_without_tools_is_not_applicable_end_to_end(tmp_path: Path) -> None:
    """The README's quick start shape (retrieve, answer, request), run as a script."""
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    traces = tmp_path / "traces"
    subprocess.run([sys.executable, "app.py", str(traces)], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    rows = [
        {
            "id": "bisque",
            "answer": "bisque ware is fired to cone 04",
            "support_titles": ["kiln-07"],
        },
        {"id": "cooling", "answer": "at least 24 hours", "support_titles": ["kiln-12"]},
        {"id": "vents", "answer": "after 1000 F", "support_titles": ["kiln-03"]},
    ]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = "from groundtrace.analyzer.cli import main; main()"
    run = subprocess.run(
        [sys.executable, "-c", code, "paths", str(traces), "--cases", str(cases),
         "--out", str(tmp_path / "p"), "--resamples", "200"],
        check=False, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert run.returncode == 6, run.stdout + run.stderr
    assert "nothing measured: not applicable: no tool calls" in " ".join(run.stderr.split())
    report = json.loads((tmp_path / "p" / "report.json").read_text())
    assert [c["status"] for c in report["cases"]] == ["not_applicable"] * 3
    assert [c["cited"] for c in report["cases"]] == [["kiln-07"], ["kiln-12"], ["kiln-03"]]
    assert report["metrics"]["masked_failures"] == []
