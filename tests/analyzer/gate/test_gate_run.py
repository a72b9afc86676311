"""End to end: SDK traces of two app versions -> OTLP-JSON files -> gate run/verify/curate."""

from __future__ import annotations

import asyncio
import hashlib
import json
from importlib import resources
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

import groundtrace.sdk as gt
from groundtrace.analyzer.cli import build_app
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

DOCS = {
    "p1": {
        "id": "p1",
        "title": "Refund policy",
        "source": "policy.md",
        "version": "v3",
        "content": "Refunds are accepted within 30 days of purchase.",
    },
    "p2": {
        "id": "p2",
        "title": "Shipping",
        "source": "shipping.md",
        "version": "v1",
        "content": "Orders ship within 2 business days.",
    },
    "p3": {
        "id": "p3",
        "title": "Warranty",
        "source": "warranty.md",
        "version": "v2",
        "content": "The warranty lasts 12 months.",
    },
}
QUESTIONS = {
    "q1": ("How long do I have to ask for a refund?", "p1", "30 days"),
    "q2": ("When will my order ship?", "p2", "2 business days"),
    "q3": ("How long is the warranty?", "p3", "12 months"),
}

app = build_app()


def _run_app(out: Path, version: str, top_k: int, mistakes: set[str]) -> None:
    """A tiny RAG app traced by the SDK; ``top_k`` 1 retrieves only the first document."""
    gt.configure(
        service_name="support-rag",
        app_version=version,
        exporter=OTLPJsonFileExporter(out),
        capture_content=True,
        redact=False,
    )

    @gt.retrieve(retriever="keyword", k=top_k)
    def search(question: str, gold: str) -> list[dict[str, str]]:
        ranked = [DOCS[gold]] + [d for k, d in DOCS.items() if k != gold]
        return ranked[:top_k] if top_k > 1 else [DOCS["p1"]]

    @gt.answer
    def respond(
        question: str, evidence: list[dict[str, str]], expected: str, case: str
    ) -> dict[str, object]:
        text = (
            expected
            if case not in mistakes and any(e["id"] == QUESTIONS[case][1] for e in evidence)
            else "I am not sure"
        )
        return {"answer": text, "confidence": 0.9, "used_chunks": [e["id"] for e in evidence[:1]]}

    @gt.request(app_name="support-rag", app_version=version)
    def handle(question: str, case_id: str) -> object:
        _, gold, expected = QUESTIONS[case_id]
        return respond(question, search(question, gold), expected, case_id)

    for case_id, (question, _, _) in QUESTIONS.items():
        handle(question, case_id=case_id)
    gt.shutdown()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gate")
    _run_app(root / "baseline", "1.0", top_k=3, mistakes=set())
    _run_app(root / "candidate", "1.1", top_k=1, mistakes=set())
    cases = [
        {
            "case_id": cid,
            "question": q,
            "reference_answer": ans,
            "required_context": [gold],
            "expected_sources": [
                {"source": DOCS[gold]["source"], "version": DOCS[gold]["version"]}
            ],
            "stratum": "critical" if cid == "q3" else "general",
        }
        for cid, (q, gold, ans) in QUESTIONS.items()
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def _gate(root: Path, candidate: str, out: str, *extra: str) -> tuple[int, dict]:
    result = CliRunner().invoke(
        app,
        [
            "gate",
            "run",
            "--baseline",
            str(root / "baseline"),
            "--candidate",
            str(root / candidate),
            "--cases",
            str(root / "cases.jsonl"),
            "--out",
            str(root / out),
            "--json",
            *extra,
        ],
    )
    return result.exit_code, json.loads(
        result.stdout.splitlines()[0]
    ) if result.stdout.strip() else {}


def test_identical_runs_promote_and_verify(runs: Path) -> None:
    code, report = _gate(runs, "baseline", "same", "--junit", str(runs / "same" / "junit.xml"))
    assert report["case_level"]["decision"] == "promote", report["case_level"]
    assert code == report["exit_code"]
    assert report["snapshots"]["dataset_sha256"] and report["snapshots"]["profile_sha256"]
    assert (runs / "same" / "summary.md").read_text().startswith("## groundtrace gate")
    assert "<testsuite" in (runs / "same" / "junit.xml").read_text()
    verified = CliRunner().invoke(app, ["gate", "verify", str(runs / "same" / "report.json")])
    assert verified.exit_code == 0, verified.output
    assert "verified" in verified.output


def test_crlf_profile_is_snapshotted_byte_for_byte_and_verifies(runs: Path) -> None:
    # A profile checked out with CRLF line ends: the report names the hash of those exact
    # bytes, the snapshot holds them, and `gate verify` re-derives the decision from it.
    shipped = resources.files("groundtrace.analyzer.gate").joinpath(
        "profiles", "balanced_default.toml"
    )
    crlf = runs / "crlf.toml"
    crlf.write_bytes(shipped.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    _, report = _gate(runs, "baseline", "crlf", "--profile", str(crlf))
    digest = hashlib.sha256(crlf.read_bytes()).hexdigest()
    assert report["snapshots"]["profile_sha256"] == digest
    snapshot = runs / "crlf" / "snapshots" / f"profile-{digest}.toml"
    assert snapshot.read_bytes() == crlf.read_bytes()
    verified = CliRunner().invoke(app, ["gate", "verify", str(runs / "crlf" / "report.json")])
    assert verified.exit_code == 0, verified.output


def test_candidate_missing_required_context_blocks_with_reasons(runs: Path) -> None:
    code, report = _gate(runs, "candidate", "regressed")
    assert code == 20 and report["decision"] == "block"
    blocked = {c["case_id"]: c for c in report["cases"] if c["decision"] == "block"}
    assert set(blocked) == {"q2", "q3"}
    assert any("required_context fail" in r for r in blocked["q2"]["reasons"])
    html = (runs / "regressed" / "report.html").read_text()
    assert "data:image/png;base64" in html


def test_verify_detects_tampering(runs: Path) -> None:
    _gate(runs, "candidate", "tamper")
    report_path = runs / "tamper" / "report.json"
    report = json.loads(report_path.read_text())
    report["decision"] = "promote"
    report_path.write_text(json.dumps(report))
    result = CliRunner().invoke(app, ["gate", "verify", str(report_path)])
    assert result.exit_code == 1 and "MISMATCH" in result.output
    snap = next((runs / "tamper" / "snapshots").glob("dataset-*.json"))
    snap.write_text(snap.read_text().replace("30 days", "31 days"))
    result = CliRunner().invoke(app, ["gate", "verify", str(report_path)])
    assert result.exit_code == 2 and "does not match its hash" in result.output


def test_not_evaluable_without_traces(runs: Path, tmp_path: Path) -> None:
    empty = runs / "empty"
    empty.mkdir(exist_ok=True)
    code, report = _gate(runs, "empty", "none")
    assert code == 30 and report["decision"] == "not_evaluable"


def test_curate_redacts_and_gate_refuses_unredacted_cases(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "curated.jsonl"
    result = CliRunner().invoke(
        app, ["gate", "curate", str(runs / "baseline"), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["cases"] == 3
    kinds = {f["kind"] for f in summary["findings"]}
    assert "coverage_gap" in kinds
    drafted = [json.loads(line) for line in out.read_text().splitlines()]
    assert drafted[0]["required_context"] == ["p1"]
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(json.dumps({"case_id": "x", "question": "mail bob@example.com"}) + "\n")
    result = CliRunner().invoke(
        app,
        [
            "gate",
            "run",
            "--baseline",
            str(runs / "baseline"),
            "--candidate",
            str(runs / "baseline"),
            "--cases",
            str(leaky),
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2
    assert "unredacted email" in result.output


def test_judge_layer_runs_review_only_without_a_validation_record(runs: Path) -> None:
    code, report = _gate(runs, "baseline", "judged", "--judge", "lexical")
    judged = [r for c in report["cases"] for r in c["results"] if r["layer"] == "judge"]
    assert judged, "the judge layer produced no result"
    adherence = [r for r in judged if r["name"] == "adherence"]
    assert adherence and all(not r["blocking"] for r in adherence)
    assert all("review-only: no validation record" in r["detail"] for r in adherence)
    assert code == report["exit_code"]
    verified = CliRunner().invoke(app, ["gate", "verify", str(runs / "judged" / "report.json")])
    assert verified.exit_code == 0, verified.output


def test_judge_checks_modes_and_protocol_errors() -> None:
    from groundtrace.analyzer.gate import CheckStatus, Decision
    from groundtrace.analyzer.gate._cases import CheckResult
    from groundtrace.analyzer.gate._decision import decide_case
    from groundtrace.analyzer.gate._judge_layer import (
        JudgeLayer,
        JudgeVerdict,
        VerdictError,
        judge_checks,
    )

    modes = {"adherence": "block", "answer_relevance": "review", "context_relevance": "observe"}
    low = JudgeVerdict({"adherence": 0.2, "answer_relevance": 0.1, "context_relevance": 0.0})
    validated = JudgeLayer(0.8, modes, {"adherence": (True, "criteria met")})
    results = {r.name: r for r in judge_checks(low, validated)}
    assert results["adherence"].blocking and results["adherence"].status is CheckStatus.FAIL
    assert results["context_relevance"].status is CheckStatus.NOTED
    assert decide_case("c", "general", list(results.values())).decision is Decision.BLOCK
    unvalidated = JudgeLayer(0.8, modes)
    results = judge_checks(low, unvalidated)
    assert decide_case("c", "general", results).decision is Decision.MANUAL_REVIEW
    broken = JudgeVerdict({}, (VerdictError("adherence", "malformed_json"),))
    results = judge_checks(broken, validated)
    assert results[0].status is CheckStatus.PROTOCOL_ERROR
    # alone, a protocol error means no metric produced a result
    assert decide_case("c", "general", results).decision is Decision.NOT_EVALUABLE
    answered = CheckResult("deterministic", "answer_present", CheckStatus.PASS)
    assert decide_case("c", "general", [answered, *results]).decision is Decision.MANUAL_REVIEW
    good = JudgeVerdict({"adherence": 0.95, "answer_relevance": 0.9, "context_relevance": 0.9})
    assert decide_case("c", "general", judge_checks(good, validated)).decision is Decision.PROMOTE


def test_layers_one_and_two_run_through_the_executor_seam(runs: Path) -> None:
    from groundtrace.analyzer.cases import read_cases
    from groundtrace.analyzer.executor import LocalExecutor
    from groundtrace.analyzer.gate import load_profile
    from groundtrace.analyzer.gate._run import evaluate, outcomes_from_traces

    class Counting(LocalExecutor):
        units = 0

        async def map(self, work, units, *, on_result=None):  # type: ignore[no-untyped-def]
            Counting.units += len(units)
            return await super().map(work, units, on_result=on_result)

    cases = list(read_cases(runs / "cases.jsonl"))
    base, _ = outcomes_from_traces([str(runs / "baseline")])
    cand, _ = outcomes_from_traces([str(runs / "candidate")])
    profile = load_profile("balanced_default")
    default = asyncio.run(evaluate(cases, base, cand, profile)).report
    spread = asyncio.run(evaluate(cases, base, cand, profile, executor=Counting(4))).report
    assert Counting.units == len(base) + len(cand)  # one unit per traced case and run
    assert default == spread and default.decision.value == "block"
    code, cli = _gate(runs, "candidate", "seam", "--executor", "local")
    assert code == 20 and cli["cases"] == json.loads(msgspec.json.encode(default))["cases"]
