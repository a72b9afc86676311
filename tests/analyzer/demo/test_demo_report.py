"""The demo's report as a versioned result: format 1.6 holds every analysis in ``analyses``;
reports of formats 1.3 to 1.5 (with their per-analysis fields) still read."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer import read, write
from groundtrace.analyzer._results import RESULT_FORMAT_VERSION, decode, encode
from groundtrace.analyzer.demo import DemoReport
from groundtrace.analyzer.demo._hooks import DemoAnalysis
from groundtrace.analyzer.demo._run import DEMO_FORMAT_VERSION, DemoBackend, ExportCounts
from groundtrace.analyzer.errors import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def demo_report() -> DemoReport:
    judged = DemoAnalysis(report="demo/judge/summary.json", reading="The judge scored 2 case(s).")
    gated = DemoAnalysis(report="demo/gate/report.json", reading="The gate blocks.", exit_code=20)
    return DemoReport(
        model="lexical", backend=DemoBackend("lexical", "lexical", "http://lexical.invalid/v1"),
        app_version="1.0.0+bm25-top5", top_k=5, out="demo", traces_dir="demo/traces",
        cases="demo/cases.jsonl", questions=2, seconds=0.5, seconds_per_question=0.25,
        export_stats=ExportCounts(10, 0, 0, 0), traces=2, spans=10,
        spans_by_action={"ANSWER": 2, "LLM": 2, "REQUEST": 2, "RETRIEVE": 2, "SELECT": 2},
        findings_by_kind={"no_citation": 1}, read_errors=(), answered=2, unmatched_traces=0,
        missing_cases=(), correct=1, exact_match=1, accuracy=0.5, em_rate=0.5, mean_f1=0.75,
        mean_confidence=None, candidate_version="1.0.0+bm25-top2",
        phase_seconds={"model server": 0.1, "app": 0.5, "candidate app": 0.5, "gate": 0.25,
                       "judge": 0.125},
        analyses={"gate": gated, "judge": judged},
    )  # fmt: skip


def test_a_demo_report_round_trips_in_its_own_format(tmp_path: Path) -> None:
    record = demo_report()
    assert record.format_version == DEMO_FORMAT_VERSION == "1.6"
    assert DEMO_FORMAT_VERSION.split(".")[0] == RESULT_FORMAT_VERSION.split(".")[0]
    assert decode(encode(record), DemoReport) == record
    write(tmp_path / "r.json", record)
    assert read(tmp_path / "r.json", DemoReport) == record
    assert next(iter(json.loads((tmp_path / "r.json").read_text()))) == "format_version"


def test_the_current_fixture_decodes_unchanged() -> None:
    path = FIXTURES / "demo_report.json"
    record = read(path, DemoReport)
    assert record == demo_report()
    assert encode(record, indent=2) + b"\n" == path.read_bytes()


@pytest.mark.parametrize("version", ["1.3", "1.4"])
def test_reports_of_earlier_formats_still_read(version: str) -> None:
    """Their ``interventions``/``gate``/``paths``/``audit`` fields, which ``analyses``
    replaced, are skipped; every other field reads as written."""
    path = FIXTURES / f"demo_report-{version}.json"
    written = json.loads(path.read_text())
    assert written["interventions"] is not None  # the field 1.6 replaced
    old = read(path, DemoReport)
    assert old.format_version == version and old.analyses == {}
    kept = json.loads(encode(old))
    assert {k: v for k, v in written.items() if k in kept} == {
        k: v for k, v in kept.items() if k in written
    }  # the fields a file of its version has not take their defaults
    assert set(written) - set(kept) == {"interventions", "audit", "gate", "paths"}


def test_an_entry_of_format_1_4_reads_with_no_exit_code(tmp_path: Path) -> None:
    """A 1.4 entry (a plugin's, through its demo hook) had no exit code: it reads as 0."""
    written = json.loads((FIXTURES / "demo_report-1.4.json").read_text())
    written["analyses"] = {"toy": {"report": "demo/toy/toy.json", "reading": "Toy.",
                                   "nothing_measured": "no span"}}  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps(written))
    (toy,) = read(path, DemoReport).analyses.values()
    assert toy == DemoAnalysis(report="demo/toy/toy.json", reading="Toy.",
                               nothing_measured="no span", exit_code=0)  # fmt: skip


def test_another_major_format_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = msgspec.to_builtins(demo_report())
    data["format_version"] = "2.0"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read(path, DemoReport)
    assert err.value.field == "format_version" and err.value.path == str(path)
