"""Result records: every kind round-trips, files of the current format decode, bad input fails.

The files under ``tests/fixtures/results/`` were written by :func:`write` from the builders
below; regenerate them after a deliberate format change with
``python -m tests.analyzer.test_results`` (and bump ``RESULT_FORMAT_VERSION``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer._results import (
    RESULT_FORMAT_VERSION,
    Result,
    decode,
    encode,
    read,
    to_builtins,
    write,
)
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.gate import load_profile
from groundtrace.analyzer.gate._cases import CaseOutcome, RetrievedItem
from groundtrace.analyzer.gate._curate import CurationFinding, CurationReport
from groundtrace.analyzer.gate._report import write_report
from groundtrace.analyzer.gate._run import GateReport, evaluate, verify_report
from groundtrace.analyzer.interventions._records import (
    AxisEffect,
    CallCounts,
    Estimate,
    InputCounts,
    InterventionSummary,
    JointResult,
    OperatorResult,
    ReplaySettings,
    RolesResult,
    RunSeeds,
    Shift,
)
from groundtrace.analyzer.judge import (
    JudgeCase,
    JudgeRunSummary,
    JudgeValidation,
    LexicalJudge,
    Metric,
    ValidationRecord,
    judge_all,
)
from groundtrace.analyzer.judge._gold import GoldItem, GoldSet
from groundtrace.analyzer.judge._record import AcceptanceProfile, build_record, load_record
from groundtrace.analyzer.judge._run import summarize_results
from groundtrace.analyzer.judge._validate import meta_evaluate
from groundtrace.analyzer.llm import ClientCounts
from groundtrace.analyzer.metrics import DivergenceWeights
from groundtrace.analyzer.paths import CaseVerdict, PathReport, PathStatus
from groundtrace.analyzer.paths._metrics import compute_metrics
from groundtrace.analyzer.paths._types import CallError, CallErrorCode
from groundtrace.analyzer.stats import StatsSettings, summarise_deltas

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
STATS = StatsSettings(n_resamples=200, seed=3, n_permutations=200)


def path_report() -> PathReport:
    verdicts = [
        CaseVerdict("a", "t1", PathStatus.PASS, text_em=True, text_f1=1.0, text_correct=True,
                    cited=("d1",), cited_read=("d1",), read=("d1",)),
        CaseVerdict(
            "b", "t2", PathStatus.MISSING_COMMAND,
            issues=({"status": "missing_command", "message": "get_price never ran"},),
            text_f1=0.5, text_correct=True,
            call_errors=(CallError(CallErrorCode.MISSING_CALL, "no call", required_index=0),),
            details={"unverified_quotes": []},
        ),
        CaseVerdict("c", None, PathStatus.NOT_REQUIRED),
    ]  # fmt: skip
    return PathReport(
        verdicts=tuple(verdicts),
        metrics=compute_metrics(verdicts, STATS),
        missing_traces=("d",),
        notes=("one note",),
    )


def intervention_summary() -> InterventionSummary:
    delta = summarise_deltas({"x": [0.0, 1.0, 1.0, 0.5]}, STATS)["x"]
    est = Estimate.of(delta)
    effect = AxisEffect(0.9, 0.4, est.mean, est.ci_low, est.ci_high, est.p_value, None, 4)
    operator = OperatorResult(
        n_items=4,
        axes={"correctness": effect, "divergence": AxisEffect(0.0, 0.3, 0.3, 0.1, 0.5, 0.06,
                                                              0.1, 4, "one-sided (D > 0)")},
        answer_changed_rate=est,
        confidence_shift=Shift.of(delta, 0.8, 0.6),
        n_failed=1,
        n_not_planned=0,
    )  # fmt: skip
    return InterventionSummary(
        operators={"REMOVE": operator},
        skipped_axes={"grounding": "no gold support titles joined (pass --cases)"},
        divergence_weights=DivergenceWeights(),
        weight_sensitivity=(),
        roles=RolesResult(0),
        joint_ablation=JointResult(0),
        failed_units={"REMOVE": 1},
        failure_kinds={"http_error": 1},
        not_planned={},
        stats_settings=STATS,
        items=4,
        input=InputCounts(5, 0, (), {"t9": "no evidence"}, 0),
        gold="joined from the case file",
        replay=ReplaySettings("function", "recorded", None, None, 0.0),
        calls=CallCounts("function", 5, 0, 5, 5, 0),
        seeds=RunSeeds(("REMOVE",), 0, 42, 42, "any", "any", False, 3, 42, 200),
    )


def _gold() -> GoldSet:
    items = []
    for i in range(40):
        ok = i % 2 == 0
        answer = "Paris is the capital of France." if ok else "Lyon is the capital."
        case = JudgeCase(f"g{i}", "What is the capital of France?",
                         ("Paris is the capital of France.",), answer)  # fmt: skip
        items.append(GoldItem(case, ok, ok, ok if i % 5 else not ok, i + 1))
    return GoldSet(tuple(items), "gold.jsonl", "two_annotators", "adjudicated", "adherence")


def _validation() -> tuple[JudgeValidation, ValidationRecord]:
    judge = LexicalJudge()
    gold = _gold()
    results = asyncio.run(judge_all(judge, [i.case for i in gold.items]))
    validation = meta_evaluate(gold, results, metric=Metric.ADHERENCE, n_resamples=200, seed=1)
    fingerprint = dict(judge.fingerprint(0.8))
    record = build_record(validation, fingerprint, AcceptanceProfile())
    record = msgspec.structs.replace(record, created="2026-01-01T00:00:00+00:00")
    validation = msgspec.structs.replace(validation, mode=record.mode, fingerprint=fingerprint)
    return validation, record


def judge_validation() -> JudgeValidation:
    return _validation()[0]


def validation_record() -> ValidationRecord:
    return _validation()[1]


def judge_run_summary() -> JudgeRunSummary:
    judge = LexicalJudge()
    results = asyncio.run(judge_all(judge, [i.case for i in _gold().items[:6]]))
    counts = ClientCounts(requests=6, cache_hits=2, coalesced=0, api_calls=5, retries=1,
                          completed=4, failures={"timeout": 1}, backoff_seconds=0.25)  # fmt: skip
    return msgspec.structs.replace(summarize_results(results, 0.8), client=counts)


def _gate_inputs() -> tuple[list[Case], dict[str, CaseOutcome], dict[str, CaseOutcome]]:
    cases = [
        Case(f"q{i}", "How long is the return window?", "30 days", support_titles=("p1",))
        for i in range(6)
    ]
    good = (RetrievedItem("p1", "Returns", "policy.md", "v1", "Returns within 30 days."),)
    base = {c.case_id: CaseOutcome(c.case_id, "Within 30 days.", good, f"b{c.case_id}")
            for c in cases}  # fmt: skip
    cand = {c.case_id: CaseOutcome(c.case_id, "Within 30 days." if i < 3 else "No idea.", good)
            for i, c in enumerate(cases)}  # fmt: skip
    return cases, base, cand


def gate_report() -> GateReport:
    cases, base, cand = _gate_inputs()
    report = asyncio.run(
        evaluate(cases, base, cand, load_profile("balanced_default"), ["a note"])
    ).report
    snapshots = msgspec.structs.replace(report.snapshots, code_version="0+fixture")
    return msgspec.structs.replace(report, snapshots=snapshots)


def curation_report() -> CurationReport:
    findings = (
        CurationFinding("coverage_gap", "no case in stratum 'critical'"),
        CurationFinding("privacy", "email redacted", case_id="q1"),
    )
    return CurationReport(cases=2, findings=findings, read_errors=("t.jsonl:3: bad line",))


BUILDERS: dict[str, Callable[[], Result]] = {
    "paths_report": path_report,
    "interventions_summary": intervention_summary,
    "judge_validation": judge_validation,
    "judge_validation_record": validation_record,
    "judge_run_summary": judge_run_summary,
    "gate_report": gate_report,
    "gate_curation": curation_report,
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_result_kind_round_trips(name: str, tmp_path: Path) -> None:
    record = BUILDERS[name]()
    assert record.format_version == RESULT_FORMAT_VERSION
    assert decode(encode(record), type(record)) == record
    write(tmp_path / "r.json", record)
    assert read(tmp_path / "r.json", type(record)) == record
    assert next(iter(json.loads((tmp_path / "r.json").read_text()))) == "format_version"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_files_of_the_current_format_decode_unchanged(name: str) -> None:
    path = FIXTURES / f"{name}.json"
    kind = type(BUILDERS[name]())
    record = read(path, kind)
    assert isinstance(record, kind)
    assert encode(record, indent=2) + b"\n" == path.read_bytes()


def test_path_report_keeps_its_json_keys() -> None:
    data = json.loads((FIXTURES / "paths_report.json").read_text())
    case = data["cases"][1]
    assert case["id"] == "b" and case["text_score"] == 0.5
    assert case["call_errors"][0]["code"] == "missing_call"
    assert (
        data["metrics"]["bootstrap"]["seed"] == 3 and len(data["metrics"]["text_score"]["ci"]) == 2
    )


def test_gate_report_verifies_from_its_snapshots(tmp_path: Path) -> None:
    cases, base, cand = _gate_inputs()
    run = asyncio.run(evaluate(cases, base, cand, load_profile("balanced_default")))
    path = write_report(run, tmp_path)
    assert read(path, GateReport) == run.report
    same, explanation = verify_report(path)
    assert same, explanation


def _fixture(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def test_another_major_version_names_file_and_field(tmp_path: Path) -> None:
    data = _fixture("paths_report")
    data["format_version"] = "2.0"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read(path, PathReport)
    assert err.value.path == str(path) and err.value.field == "format_version"
    assert "2.0" in str(err.value)
    data["format_version"] = "1.7"  # a later minor version still reads
    path.write_text(json.dumps(data))
    assert read(path, PathReport).format_version == "1.7"


def test_to_builtins_writes_a_path_as_its_text_and_refuses_what_has_no_json() -> None:
    from dataclasses import dataclass

    @dataclass
    class InMemory:
        out: Path
        other: object = None

    assert to_builtins(InMemory(Path("runs/a"))) == {"out": "runs/a", "other": None}
    with pytest.raises(TypeError, match="cannot encode object"):
        to_builtins(InMemory(Path("runs/a"), object()))


def test_a_file_without_version_is_not_a_record(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"cases": []}))
    with pytest.raises(InputError) as err:
        read(path, PathReport)
    assert err.value.field == "format_version" and "no result format version" in str(err.value)


def test_a_validation_record_from_before_versioning_still_loads(tmp_path: Path) -> None:
    data = _fixture("judge_validation_record")
    del data["format_version"]  # records carried only their schema id before
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    recorded = read(FIXTURES / "judge_validation_record.json", ValidationRecord)
    # an unversioned record is read as the current version
    current = msgspec.structs.replace(recorded, format_version=RESULT_FORMAT_VERSION)
    assert load_record(path) == current


@pytest.mark.parametrize(
    ("name", "kind", "change", "field"),
    [
        (
            "paths_report",
            PathReport,
            ("metrics", "path_pass_rate", "n"),
            "metrics.path_pass_rate.n",
        ),
        ("gate_report", GateReport, ("decision",), "decision"),
        ("judge_validation_record", ValidationRecord, ("criteria",), "criteria"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(
    name: str, kind: type[Result], change: tuple[str, ...], field: str, tmp_path: Path
) -> None:
    data = _fixture(name)
    target: dict[str, object] = data
    for key in change[:-1]:
        target = target[key]  # type: ignore[assignment]
    target[change[-1]] = "not-a-valid-value"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read(path, kind)
    assert err.value.path == str(path) and err.value.field == field


def test_unreadable_and_malformed_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read(tmp_path / "missing.json", PathReport)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="not a PathReport: "):
        read(tmp_path / "bad.json", PathReport)


if __name__ == "__main__":  # regenerate the fixtures
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for fixture, build in BUILDERS.items():
        write(FIXTURES / f"{fixture}.json", build())
