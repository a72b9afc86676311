"""The gate in the one analysis shape: ``Config`` → ``plan`` → ``run`` → ``write_report`` →
``reading``, the same decision as ``evaluate`` and ``groundtrace gate run``.

The data is an island ferry's notices (a domain the repository holds nowhere else): a small
RAG app written here and traced with the SDK, its notice ids the gold. The baseline reads the
two notices nearest the question; the candidate reads only the first notice, so it loses the
answers of the other two questions (one of them critical).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import groundtrace.analyzer.gate as gate
import groundtrace.sdk as gt
from groundtrace.analyzer import get_analysis, load_config, read, run_analysis
from groundtrace.analyzer._results import encode
from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import InputError, TraceReadError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.gate._checks import gold_unmatched
from groundtrace.analyzer.gate._run import evaluate, outcomes_from_traces
from groundtrace.analyzer.gate._shape import GateCase, GatePlan
from groundtrace.analyzer.gate._verdicts import gate_verdicts
from groundtrace.analyzer.writeback import root_spans
from groundtrace.collectors.readers import read_traces
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

#: id -> notice: the ferry office's board.
NOTICES: dict[str, dict[str, str]] = {
    "fe-1": {"title": "Timetable", "source": "board.md", "version": "2031-04",
             "content": "The morning ferry to Inselholm leaves the harbour at 07:15."},
    "fe-2": {"title": "Bicycles", "source": "board.md", "version": "2031-04",
             "content": "Bicycles travel free on weekdays."},
    "fe-3": {"title": "Dogs", "source": "deck.md", "version": "3",
             "content": "Dogs stay on a lead on the upper deck."},
}  # fmt: skip

#: case id -> (question, gold notice id, reference answer, stratum).
QUESTIONS: dict[str, tuple[str, str, str, str]] = {
    "ferry-a": ("When does the morning ferry leave?", "fe-1", "07:15", "general"),
    "ferry-b": ("Do bicycles cost extra?", "fe-2", "free on weekdays", "general"),
    "ferry-c": ("Where must dogs stay?", "fe-3", "on a lead", "critical"),
}

app = build_app()


def _ferry_app(out: Path, version: str, top_k: int) -> None:
    """The ferry desk traced by the SDK; ``top_k`` 1 reads the timetable notice only."""
    gt.configure(service_name="ferry-desk", app_version=version,
                 exporter=OTLPJsonFileExporter(out), capture_content=True,
                 redact=False)  # fmt: skip

    @gt.retrieve(retriever="board", k=top_k)
    def notices(question: str, gold: str) -> list[dict[str, str]]:
        ranked = [gold, *(k for k in NOTICES if k != gold)] if top_k > 1 else ["fe-1"]
        return [{"id": k, **NOTICES[k]} for k in ranked[:top_k]]

    @gt.answer
    def reply(question: str, evidence: list[dict[str, str]], gold: str) -> dict[str, Any]:
        answer = next((QUESTIONS[c][2] for c in QUESTIONS if QUESTIONS[c][1] == gold), "")
        read_gold = any(e["id"] == gold for e in evidence)
        return {"answer": answer if read_gold else "Please ask at the desk.",
                "confidence": 0.9, "used_chunks": [e["id"] for e in evidence[:1]]}  # fmt: skip

    @gt.request(app_name="ferry-desk", app_version=version)
    def ask(question: str, case_id: str) -> object:
        gold = QUESTIONS[case_id][1]
        return reply(question, notices(question, gold), gold)

    for case_id, (question, *_) in QUESTIONS.items():
        ask(question, case_id=case_id)
    gt.shutdown()


@pytest.fixture(scope="module")
def ferry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Baseline and candidate traces, an empty run and the case file, in one folder."""
    root = tmp_path_factory.mktemp("ferry")
    _ferry_app(root / "v1", "1.0", top_k=2)
    _ferry_app(root / "v2", "2.0", top_k=1)
    (root / "empty").mkdir()
    cases = [
        {"case_id": cid, "question": q, "reference_answer": answer, "required_context": [gold],
         "expected_sources": [{"source": NOTICES[gold]["source"],
                               "version": NOTICES[gold]["version"]}],
         "stratum": stratum}
        for cid, (q, gold, answer, stratum) in QUESTIONS.items()
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def _config(root: Path, candidate: str = "v2", **extra: Any) -> gate.Config:
    return gate.Config(baseline=(str(root / "v1"),), candidate=(str(root / candidate),),
                       cases=str(root / "cases.jsonl"), **extra)  # fmt: skip


def _run(config: gate.Config, units: Any = None) -> gate.GateResult:
    """The gate run by the driver (into a folder thrown away: the result is what is read)."""
    with tempfile.TemporaryDirectory() as out:
        done = run_analysis(gate.ANALYSIS, config, out=out, concurrency=1, units=units)
    assert done.result is not None
    return done.result


def test_the_record_is_what_get_analysis_returns() -> None:
    record = get_analysis("gate")
    assert record is gate.ANALYSIS and record.name == "gate"
    assert record.config is gate.Config and record.plan is gate.plan and record.run is gate.run
    assert record.write_report is gate.write_report and record.reading is gate.reading
    assert record.nothing_measured is gate.nothing_measured
    assert record.verdicts is gate.verdicts


def test_a_toml_config_is_the_config(tmp_path: Path) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(
        'baseline = ["runs/v1", "runs/v1b"]\ncandidate = ["runs/v2"]\ncases = "cases.jsonl"\n'
        'profile = "decision_grade"\njudge = "lexical"\njudge_records = ["adherence.json"]\n'
        'junit = "out/junit.xml"\n'
    )
    assert load_config(gate.ANALYSIS, path) == gate.Config(
        baseline=("runs/v1", "runs/v1b"), candidate=("runs/v2",), cases="cases.jsonl",
        profile="decision_grade", judge="lexical", judge_records=("adherence.json",),
        junit="out/junit.xml",
    )  # fmt: skip
    path.write_text('baseline = ["a"]\ncandidate = ["b"]\ncases = "c.jsonl"\n')
    loaded = load_config(gate.ANALYSIS, path)
    assert (loaded.profile, loaded.judge, loaded.junit, loaded.strict) == (
        "balanced_default", None, None, False)  # fmt: skip


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('baseline = "runs/v1"\ncandidate = ["b"]\ncases = "c.jsonl"\n', "baseline"),
        ('baseline = ["a"]\ncandidate = ["b"]\n', "cases"),
        ('baseline = ["a"]\ncandidate = ["b"]\ncases = "c.jsonl"\njunit_xml = "j.xml"\n',
         "junit_xml"),
    ],
    ids=["wrong type", "missing", "unknown"],
)  # fmt: skip
def test_a_bad_config_names_its_file_and_field(tmp_path: Path, toml: str, field: str) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(toml)
    with pytest.raises(InputError) as raised:
        load_config(gate.ANALYSIS, path)
    assert str(path) in str(raised.value) and field in str(raised.value)


def test_plan_has_one_unit_per_case_with_both_runs_outcomes(ferry: Path) -> None:
    units = gate.plan(_config(ferry))
    assert isinstance(units, GatePlan) and len(units) == len(QUESTIONS)
    assert [u.case.case_id for u in units] == list(QUESTIONS)
    assert units[0] == next(iter(units)) and list(units[1:]) == list(units)[1:]
    by_case = {u.case.case_id: u for u in units}
    for cid, (_, gold, _, _) in QUESTIONS.items():
        base, cand = by_case[cid].baseline, by_case[cid].candidate
        assert base is not None and cand is not None
        assert gold in {i.id for i in base.retrieved or ()}
        assert {i.id for i in cand.retrieved or ()} == {"fe-1"}
    assert units.profile.name == "balanced_default" and not units.unreadable


def test_the_shape_decides_as_evaluate_and_the_gate_run_command(
    ferry: Path, tmp_path: Path
) -> None:
    config = _config(ferry, junit=str(tmp_path / "junit" / "gate.xml"))
    result = _run(config)
    cases = list(read_cases(ferry / "cases.jsonl"))
    base, base_notes = outcomes_from_traces([str(ferry / "v1")], cases=cases)
    cand, cand_notes = outcomes_from_traces([str(ferry / "v2")], cases=cases)
    assert not base_notes and not cand_notes
    # The candidate did not retrieve ferry-b's and ferry-c's gold, which the baseline did: a
    # retrieval regression (required_context fails), not a gold in the wrong format.
    everywhere = [i for o in (*base.values(), *cand.values()) for i in o.retrieved or ()]
    assert [c.case_id for c in cases if gold_unmatched(c, cand[c.case_id])] == [
        "ferry-b",
        "ferry-c",
    ]  # its own trace alone matches nothing
    notes = [why for c in cases for o in (base, cand)
             if (why := gold_unmatched(c, o[c.case_id], everywhere))]  # fmt: skip
    assert notes == []
    expected = asyncio.run(evaluate(cases, base, cand, gate.load_profile("balanced_default"),
                                    notes, executor=LocalExecutor(2)))  # fmt: skip
    assert result.report == expected.report and result.dataset_json == expected.dataset_json
    decisions = {c.case_id: c.decision.value for c in result.report.cases}
    assert decisions == {"ferry-a": "promote", "ferry-b": "block", "ferry-c": "block"}
    assert result.report.decision is gate.Decision.BLOCK and result.report.exit_code == 20
    assert gate.nothing_measured(result) is None

    main = gate.write_report(result, tmp_path / "shape")
    assert main == tmp_path / "shape" / "report.json"
    assert {p.name for p in main.parent.iterdir()} >= {"summary.md", "report.html", "snapshots"}
    junit = (tmp_path / "junit" / "gate.xml").read_text()
    assert 'name="ferry-c"' in junit and 'failures="2"' in junit
    assert gate.verify_report(main)[0]

    out = tmp_path / "cli"
    cli = CliRunner().invoke(app, [
        "gate", "run", "--baseline", str(ferry / "v1"), "--candidate", str(ferry / "v2"),
        "--cases", str(ferry / "cases.jsonl"), "--out", str(out), "--json",
    ])  # fmt: skip
    assert cli.exit_code == 20, cli.output
    assert json.loads(cli.stdout) == json.loads(encode(result.report))
    read_back = read(out / "report.json", gate.GateReport)
    assert gate.reading(read_back) == gate.reading(result)
    assert gate.reading(result).startswith("The gate blocks the candidate (exit code 20).")


def test_a_plain_sequence_of_cases_is_decided_alike(ferry: Path) -> None:
    config = _config(ferry)
    units = gate.plan(config)
    plain = [GateCase(u.case, u.baseline, u.candidate) for u in units]
    result = _run(config, plain)
    assert result.report.cases == _run(config).report.cases


def test_nothing_measured_when_no_candidate_trace(ferry: Path, tmp_path: Path) -> None:
    result = _run(_config(ferry, candidate="empty"))
    assert result.report.decision is gate.Decision.NOT_EVALUABLE
    why = gate.nothing_measured(result)
    assert why is not None and why.startswith("no case of the candidate could be evaluated")
    assert gate.nothing_measured(result.report) == why
    cli = CliRunner().invoke(app, [
        "gate", "run", "--baseline", str(ferry / "v1"), "--candidate", str(ferry / "empty"),
        "--cases", str(ferry / "cases.jsonl"), "--out", str(tmp_path / "cli"), "--json",
    ])  # fmt: skip
    assert cli.exit_code == 30, cli.output  # the decision code, as before the shape
    config = tmp_path / "gate.toml"
    config.write_text(
        f"baseline = [{str(ferry / 'v1')!r}]\ncandidate = [{str(ferry / 'empty')!r}]\n"
        f"cases = {str(ferry / 'cases.jsonl')!r}\n"
    )
    generic = CliRunner().invoke(
        app, ["analyze", "gate", "--config", str(config), "--out", str(tmp_path / "generic")]
    )
    # one exit-code policy (the driver's): the gate's own decision code wins over 6
    assert generic.exit_code == 30, generic.output
    assert (tmp_path / "generic" / "report.json").is_file()


def test_verdicts_are_the_write_back_of_the_candidates_decisions(ferry: Path) -> None:
    config = _config(ferry)
    result = _run(config)
    dataset = json.loads(result.dataset_json)
    trace_ids = {k: o["trace_id"] for k, o in dataset["candidate"].items()}
    roots = root_spans(read_traces([str(ferry / "v2")]))
    linked = gate.verdicts(result, config)
    assert linked == gate_verdicts(result.report, trace_ids, roots)
    assert {v.case_id: v.label for v in linked.verdicts} == {
        "ferry-a": "promote", "ferry-b": "block", "ferry-c": "block"}  # fmt: skip


def test_plan_refuses_unredacted_cases_and_under_strict_unreadable_lines(
    ferry: Path, tmp_path: Path
) -> None:
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(json.dumps({"case_id": "x", "question": "mail skipper@example.com"}) + "\n")
    with pytest.raises(InputError, match="blocking curation finding") as raised:
        gate.plan(gate.Config(baseline=(str(ferry / "v1"),), candidate=(str(ferry / "v2"),),
                              cases=str(leaky)))  # fmt: skip
    assert raised.value.path == str(leaky)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    lenient = gate.plan(_config(ferry, candidate=str(broken)))
    assert len(lenient.unreadable) == 1 and any("read error" in n for n in lenient.notes)
    with pytest.raises(TraceReadError, match=r"1 unreadable trace line\(s\) \(--strict\)"):
        gate.plan(_config(ferry, candidate=str(broken), strict=True))
