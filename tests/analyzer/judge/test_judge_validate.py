"""Judge meta-evaluation: grades, gold layouts, the validation record and the CLI."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path

import httpx2
import msgspec
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.judge import (
    JudgeValidation,
    LexicalJudge,
    Metric,
    ValidationRecord,
    judge_all,
)
from groundtrace.analyzer.judge._gold import RowFilter, load_gold
from groundtrace.analyzer.judge._llm_judge import LLMJudge
from groundtrace.analyzer.judge._record import (
    GATE_ELIGIBLE,
    REVIEW_ONLY,
    AcceptanceProfile,
    build_record,
    check_record,
)
from groundtrace.analyzer.judge._types import DEFAULT_THRESHOLD
from groundtrace.analyzer.judge._validate import grade_set, meta_evaluate
from groundtrace.analyzer.llm import ModelClient
from tests.support.data import DATA
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

#: HaluEval and RAGBench rows shipped for the tests; the shared sample adds RAGTruth (human labels).
GROUNDEDNESS = DATA / "groundedness/halueval_ragbench_dev.jsonl"
SHARED_GROUNDEDNESS = "groundedness/rag_groundedness_binary_dev.jsonl"

app = build_app()


def _write_gold(path: Path, n: int, *, fail_share: float = 0.5, seed: int = 0) -> Path:
    """Two-annotator gold rows; annotator B disagrees with A on ~10% of items."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        ok = i >= int(n * fail_share)
        answer = f"Paris is the capital. SUPPORTED-{i}" if ok else f"Lyon is it. UNSUPPORTED-{i}"
        b = ok if rng.random() > 0.1 else not ok
        rows.append(
            {
                "id": f"g{i}",
                "item": {
                    "question": "What is the capital of France?",
                    "context": ["Paris is the capital of France."],
                    "answer": answer,
                },
                "annotator_a": ok,
                "annotator_b": "pass" if b else "fail",
                "adjudicated": int(ok),
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _mock_judge(mode: str, seed: int = 0) -> LLMJudge:
    """An endpoint judge that always answers perfect JSON: random or oracle scores."""

    def respond(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        answer = prompt.split("ANSWER:\n", 1)[1]
        if mode == "oracle":
            score = 0.0 if "UNSUPPORTED" in answer else 1.0
        else:  # random, but reproducible per prompt
            digest = hashlib.sha256(f"{seed}:{prompt}".encode()).digest()
            score = int.from_bytes(digest[:4], "big") / 2**32
        content = json.dumps(
            {"context_relevance": 1, "adherence": score, "answer_relevance": 1, "rationale": "-"}
        )
        return httpx2.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            },
        )

    client = ModelClient(
        "http://127.0.0.1:9/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )
    return LLMJudge(client, f"{mode}-judge")


def _validate(
    gold_path: Path, judge: LLMJudge | LexicalJudge
) -> tuple[JudgeValidation, ValidationRecord]:
    gold = load_gold(gold_path)
    results = asyncio.run(judge_all(judge, [i.case for i in gold.items]))
    profile = AcceptanceProfile()
    report = meta_evaluate(gold, results, metric=Metric.ADHERENCE, threshold=0.8)
    return report, build_record(report, judge.fingerprint(0.8), profile)


def test_random_scores_with_perfect_json_fail_and_go_review_only(tmp_path: Path) -> None:
    gold = _write_gold(tmp_path / "gold.jsonl", 160)
    report, record = _validate(gold, _mock_judge("random"))
    assert report.protocol_errors.count == 0
    assert report.grade.value == "decision"
    assert record.mode == REVIEW_ONLY
    failed = {c.name for c in record.criteria if not c.passed}
    assert {"kappa_ci_low", "auroc"} <= failed and "protocol_error_rate" not in failed
    assert report.kappa.ci_low is not None and report.kappa.ci_low < 0.4


def test_oracle_scores_pass_and_are_gate_eligible(tmp_path: Path) -> None:
    gold = _write_gold(tmp_path / "gold.jsonl", 160)
    report, record = _validate(gold, _mock_judge("oracle"))
    assert record.mode == GATE_ELIGIBLE and record.reasons == ()
    assert report.kappa.value == 1.0 and report.auroc.value == 1.0
    assert report.mcc.value == 1.0
    # Inter-annotator agreement is measured on the two annotators and matches sklearn.
    rows = [json.loads(x) for x in gold.read_text().splitlines()]
    a = [r["annotator_a"] for r in rows]
    b = [r["annotator_b"] == "pass" for r in rows]
    ia = report.inter_annotator
    assert ia.available and ia.kappa is not None
    assert ia.kappa.value == pytest.approx(cohen_kappa_score(a, b))


def test_small_gold_set_is_smoke_grade_and_not_gate_eligible(tmp_path: Path) -> None:
    gold = _write_gold(tmp_path / "gold.jsonl", 40)
    report, record = _validate(gold, _mock_judge("oracle"))
    assert report.grade.value == "smoke"
    assert record.mode == REVIEW_ONLY
    assert any(r.startswith("grade:") for r in record.reasons)


@pytest.mark.parametrize(
    ("n", "n_pass", "grade", "reason"),
    [
        (29, 15, "invalid", "< 30 needed"),
        (30, 15, "smoke", None),
        (99, 50, "smoke", None),
        (100, 70, "decision", None),
        (100, 71, "invalid", "minority class (fail) is 29.0%"),
        (120, 120, "invalid", "only one class"),
    ],
)
def test_grade_rules(n: int, n_pass: int, grade: str, reason: str | None) -> None:
    out = grade_set(n, n_pass)
    assert out.value == grade
    if reason is None:
        assert out.reasons == ()
    else:
        assert any(reason in r for r in out.reasons)


def test_changed_fingerprint_invalidates_the_record(tmp_path: Path) -> None:
    gold = _write_gold(tmp_path / "gold.jsonl", 160)
    judge = _mock_judge("oracle")
    _, record = _validate(gold, judge)
    same = check_record(record, judge.fingerprint(0.8))
    assert same.valid and same.mode == GATE_ELIGIBLE
    moved = check_record(record, judge.fingerprint(0.7))
    assert not moved.valid and moved.mode == REVIEW_ONLY and moved.changed == ("threshold",)
    other = LLMJudge(judge.client, "another-model")
    assert check_record(record, other.fingerprint(0.8)).changed == ("model",)
    tampered = msgspec.structs.replace(
        record, fingerprint={**record.fingerprint, "model": "another-model"}
    )
    out = check_record(tampered, other.fingerprint(0.8))
    assert not out.valid and "altered" in out.reason


@pytest.mark.parametrize(
    ("tier", "source", "n", "n_supported", "n_rows", "balanced_source"),
    [
        ("shipped", "RAGBench", 40, 20, 540, "HaluEval"),
        # the human-labelled RAGTruth rows may not be redistributed: the optional shared tier
        ("shared", "RAGTruth", 414, 339, 1320, "RAGTruth"),
    ],
)
def test_groundedness_layout_with_label_field_and_filters(
    request: pytest.FixtureRequest,
    tier: str,
    source: str,
    n: int,
    n_supported: int,
    n_rows: int,
    balanced_source: str,
) -> None:
    if tier == "shipped":
        path = GROUNDEDNESS
    else:
        path = request.getfixturevalue("shared_data") / SHARED_GROUNDEDNESS
    chosen = load_gold(
        path, label_field="supported", filters=(RowFilter.parse(f"source~{source}"),)
    )
    assert chosen.layout == "single_label" and len(chosen.items) == n
    assert sum(i.label for i in chosen.items) == n_supported
    # 'human' alone also matches "not human" in the other origins: the filter is literal.
    loose = load_gold(
        path, label_field="supported", filters=(RowFilter.parse("label_origin~human"),)
    )
    assert len(loose.items) > len(chosen.items)
    rest = load_gold(path, label_field="supported", filters=(RowFilter.parse(f"source!~{source}"),))
    assert len(rest.items) + len(chosen.items) == n_rows
    balanced = load_gold(
        path,
        label_field="supported",
        filters=(RowFilter.parse(f"source~{balanced_source}"),),
        sample=150,
        stratify=True,
        seed=3,
    )
    assert sum(i.label for i in balanced.items) == 75 and len(balanced.items) == 150
    assert balanced.sample == {"size": 150, "stratify": True, "seed": 3, "drawn": 150}


def test_lexical_judge_on_constructed_halueval_rows() -> None:
    gold = load_gold(
        GROUNDEDNESS,
        label_field="supported",
        filters=(RowFilter.parse("source~HaluEval"),),
    )
    results = asyncio.run(judge_all(LexicalJudge(), [i.case for i in gold.items]))
    report = meta_evaluate(gold, results, metric=Metric.ADHERENCE, threshold=0.8)
    assert report.auroc.value is not None and report.auroc.value > 0.85
    assert report.kappa.ci_low is not None and report.kappa.ci_low > 0.4
    # Answers without content words ("No") cannot be scored: counted, not imputed.
    assert report.protocol_errors.by_kind == {"missing": report.n_items - report.n}


def test_bad_gold_rows_fail_with_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "context": "c", "answer": "a", "label": "maybe"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1 \[label\]"):
        load_gold(bad)
    bad.write_text('{"question": "q", "context": "c", "answer": "a", "label": 1}\n{oops\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2"):
        load_gold(bad)
    with pytest.raises(ConfigError):
        RowFilter.parse("no-operator")


def test_profile_file_overrides_defaults_and_rejects_unknown_keys(tmp_path: Path) -> None:
    good = tmp_path / "p.toml"
    good.write_text('[judge_acceptance]\nname = "strict"\nauroc_min = 0.9\nmin_grade = "smoke"\n')
    profile = AcceptanceProfile.from_file(good)
    assert (profile.name, profile.auroc_min, profile.min_grade) == ("strict", 0.9, "smoke")
    bad = tmp_path / "b.toml"
    bad.write_text("auroc = 0.9\n")
    with pytest.raises(ConfigError, match="unknown settings"):
        AcceptanceProfile.from_file(bad)


STAT_KEYS = {"value", "ci_low", "ci_high"}


def test_cli_validate_json_files_and_check(tmp_path: Path) -> None:
    runner = CliRunner()
    gold = _write_gold(tmp_path / "gold.jsonl", 120)
    out = tmp_path / "out"
    res = runner.invoke(
        app, ["judge", "validate", "--gold", str(gold), "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert {"n", "grade", "kappa", "mcc", "auroc", "sweep"} <= set(data)
    for key in ("kappa", "mcc", "auroc", "raw_agreement"):
        assert STAT_KEYS <= set(data[key])
    assert [row["threshold"] for row in data["sweep"]] == [
        0.1,
        0.2,
        0.3,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
    ]
    assert all(STAT_KEYS <= set(row["mcc"]) for row in data["sweep"])
    assert data["bootstrap"] == {
        "n_resamples": 1000,
        "seed": 20260709,
        "confidence": 0.95,
        "method": "percentile",
    }
    assert data["n"] == 120 and data["grade"]["value"] == "decision"
    for name in ("report.md", "validation.json", "validation_record_adherence.json"):
        assert (out / name).is_file()
    assert len((out / "judgments.jsonl").read_text().splitlines()) == 120
    assert "Cohen's κ" in (out / "report.md").read_text()
    record = out / "validation_record_adherence.json"
    mode = json.loads(record.read_text())["mode"]
    ok = runner.invoke(app, ["judge", "check", "--record", str(record)])
    assert ok.exit_code == (0 if mode == GATE_ELIGIBLE else 1)
    moved = runner.invoke(app, ["judge", "check", "--record", str(record), "--threshold", "0.5"])
    assert moved.exit_code == 1
    assert re.search(r"record INVALID.*fingerprint changed \(threshold\)", moved.stdout)


def test_cli_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    runner = CliRunner()
    gold = _write_gold(tmp_path / "gold.jsonl", 10)
    res = runner.invoke(
        app,
        ["judge", "validate", "--gold", str(gold), "--out", str(tmp_path), "--judge", "http://x"],
    )
    assert res.exit_code == 2 and "--model is required" in res.output
    res = runner.invoke(
        app, ["judge", "validate", "--gold", str(tmp_path / "nope"), "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "cannot read gold set" in res.output


def test_cli_run_on_a_case_file_counts_protocol_errors(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "a",
                "question": "Capital of France?",
                "context": "Paris is the capital of France.",
                "answer": "Paris",
            }
        )
        + "\n"
        + json.dumps({"id": "b", "question": "Capital?", "context": "Paris.", "answer": "No."})
        + "\n"
    )
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app, ["judge", "run", "--cases", str(cases), "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["cases"] == 2 and summary["needs_review"] == 1
    assert summary["metrics"]["adherence"]["errors_by_kind"] == {"missing": 1}
    assert summary["metrics"]["adherence"]["pass"] == 1


def test_threshold_resolves_alike_in_validate_run_and_check(tmp_path: Path) -> None:
    # A user validates under an acceptance profile with its own threshold; `judge check` and
    # `judge run` with the same --profile use that threshold too (no fingerprint mismatch),
    # and without one every command falls back to the one default.
    runner = CliRunner()
    gold = _write_gold(tmp_path / "gold.jsonl", 120)
    profile = tmp_path / "acceptance.toml"
    profile.write_text("[judge_acceptance]\nthreshold = 0.6\n", encoding="utf-8")
    out = tmp_path / "out"
    res = runner.invoke(
        app,
        ["judge", "validate", "--gold", str(gold), "--out", str(out), "--profile", str(profile)],
    )
    assert res.exit_code == 0, res.output
    record = out / "validation_record_adherence.json"
    assert json.loads(record.read_text())["fingerprint"]["threshold"] == 0.6
    same = runner.invoke(
        app, ["judge", "check", "--record", str(record), "--profile", str(profile), "--json"]
    )
    assert json.loads(same.stdout)["valid"] is True, same.output
    bare = runner.invoke(app, ["judge", "check", "--record", str(record), "--json"])
    assert json.loads(bare.stdout)["changed"] == ["threshold"]  # 0.8 is not 0.6
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "c", "question": "Capital?", "context": "Paris.", "answer": "Paris."})
        + "\n",
        encoding="utf-8",
    )
    run = runner.invoke(
        app,
        ["judge", "run", "--cases", str(cases), "--out", str(tmp_path / "run"),
         "--profile", str(profile), "--json"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["fingerprint"]["threshold"] == 0.6
    assert AcceptanceProfile().threshold == DEFAULT_THRESHOLD
    default_out = tmp_path / "default"
    res = runner.invoke(app, ["judge", "validate", "--gold", str(gold), "--out", str(default_out)])
    fp = json.loads((default_out / "validation_record_adherence.json").read_text())["fingerprint"]
    assert fp["threshold"] == DEFAULT_THRESHOLD


def test_rubric_option_binds_the_record_to_the_rubric_file(tmp_path: Path) -> None:
    # `judge validate --rubric FILE` sends the user's rubric and records its digest; `judge
    # check` confirms the record only for that rubric; the lexical judge refuses --rubric.
    runner = CliRunner()
    gold = _write_gold(tmp_path / "gold.jsonl", 30)
    rubric = tmp_path / "strict_v2.md"
    rubric.write_bytes(b"Grade strictly.\r\nOnly the context counts.\r\n")

    def handler(req: ServerRequest) -> Reply:
        answer = last_user_text(req).split("ANSWER:\n", 1)[1]
        score = 0.0 if "UNSUPPORTED" in answer else 1.0
        return Reply(
            content=json.dumps(
                {"context_relevance": 1, "adherence": score, "answer_relevance": 1,
                 "rationale": "-"}
            )
        )  # fmt: skip

    out = tmp_path / "out"
    with OpenAICompatServer(handler=handler) as srv:
        endpoint = ["--judge", srv.base_url, "--model", "m"]
        res = runner.invoke(
            app,
            ["judge", "validate", "--gold", str(gold), "--out", str(out), *endpoint,
             "--rubric", str(rubric)],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        assert all("Grade strictly." in last_user_text(r) for r in srv.requests)
        record = out / "validation_record_adherence.json"
        fp = json.loads(record.read_text())["fingerprint"]
        assert fp["rubric_version"] == "strict_v2"
        assert fp["rubric_sha256"] == hashlib.sha256(rubric.read_bytes()).hexdigest()
        check = ["judge", "check", "--record", str(record), *endpoint, "--json"]
        same = runner.invoke(app, [*check, "--rubric", str(rubric)])
        assert json.loads(same.stdout)["valid"] is True, same.output
        other = runner.invoke(app, check)  # the shipped default rubric
        assert set(json.loads(other.stdout)["changed"]) == {"rubric_version", "rubric_sha256"}
    lexical = runner.invoke(
        app, ["judge", "validate", "--gold", str(gold), "--out", str(out), "--rubric", str(rubric)]
    )
    assert lexical.exit_code == 2 and "lexical judge has no rubric" in lexical.output
    missing = runner.invoke(
        app, [*check[:4], "--judge", "http://127.0.0.1:9/v1", "--model", "m", "--rubric", "nope"]
    )
    assert missing.exit_code == 2 and "cannot read rubric" in missing.output


def test_a_config_names_its_judges_fingerprint_without_opening_a_client() -> None:
    from groundtrace.analyzer.judge import Config
    from groundtrace.analyzer.judge._config import build_judge
    from groundtrace.analyzer.judge._lexical import LexicalJudge

    lexical = Config(threshold=0.6)
    assert lexical.fingerprint() == dict(LexicalJudge().fingerprint(0.6))
    endpoint = Config(judge="http://127.0.0.1:9/v1/", model="m", judge_seed=3, threshold=0.7)
    judge, client = build_judge(endpoint, cache=False)
    assert client is not None
    asyncio.run(client.aclose())
    assert endpoint.fingerprint() == dict(judge.fingerprint(0.7))
    assert endpoint.fingerprint() != Config(judge="http://127.0.0.1:9/v1", model="n").fingerprint()
    with pytest.raises(ConfigError, match="--model is required"):
        Config(judge="http://127.0.0.1:9/v1").fingerprint()
