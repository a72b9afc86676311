"""A new user's app of a domain the repository does not contain, through every analysis by
the command line, written from the docs' formats alone (docs/cases.md, docs/analyses.md).

The app (:mod:`tests.support.new_domain.app`) is a greenhouse handbook RAG service: BM25
(rank_bm25) over seven pages whose chunk ids are the gold, the ``openai`` client against its
own OpenAI-compatible model server (a deterministic extractive reader on 127.0.0.1), the SDK's
decorators as the quick start shows. It runs as a script in its own process, as a user runs
it, twice: release 1, and release 2 with a planted retrieval regression (its ranking sorted
the wrong way round). Each analysis must give the result worked out by hand from the pages.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.new_domain.handbook import CASES, AuditPaths, write_audit_corpus, write_cases
from tests.support.new_domain.model_server import MODEL, reader_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
GROUNDTRACE = str(Path(sys.executable).parent / "groundtrace")
NOTHING_MEASURED = 6


@dataclass(frozen=True)
class Greenhouse:
    """The new user's files: two releases' traces, the case file, the audit corpus."""

    v1: Path
    v2: Path
    cases: Path
    audit: AuditPaths
    model_url: str
    out: Path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``groundtrace ARGS`` as the user types it (the installed entry point)."""
    return subprocess.run(
        [GROUNDTRACE, *args], capture_output=True, text=True, timeout=240, check=False
    )


@pytest.fixture(scope="module")
def greenhouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Greenhouse]:
    out = tmp_path_factory.mktemp("greenhouse")
    with reader_server() as server:
        for version in ("1", "2"):
            subprocess.run(
                [sys.executable, "-m", "tests.support.new_domain.app", str(out / f"v{version}"),
                 "--model-url", server.base_url, "--version", version],
                cwd=ROOT, check=True, timeout=120,
            )  # fmt: skip
        yield Greenhouse(
            v1=out / "v1" / "traces",
            v2=out / "v2" / "traces",
            cases=write_cases(out / "cases.jsonl"),
            audit=write_audit_corpus(out / "audit-corpus"),
            model_url=server.base_url,
            out=out,
        )


def test_traces_summary_counts_the_apps_own_steps(greenhouse: Greenhouse) -> None:
    done = _cli("traces", "summary", str(greenhouse.v1), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["traces"] == len(CASES)
    by_action = summary["steps_by_action"]
    assert {a: by_action[a] for a in ("REQUEST", "RETRIEVE", "ANSWER", "LLM")} == dict.fromkeys(
        ("REQUEST", "RETRIEVE", "ANSWER", "LLM"), len(CASES)
    )
    assert summary["findings_by_kind"] == {}
    assert summary["read_errors"] == []


def test_gate_blocks_the_planted_regression_and_promotes_an_unchanged_release(
    greenhouse: Greenhouse,
) -> None:
    same = _cli("gate", "run", "--baseline", str(greenhouse.v1), "--candidate",
                str(greenhouse.v1), "--cases", str(greenhouse.cases), "--out",
                str(greenhouse.out / "gate-same"))  # fmt: skip
    assert same.returncode == 0, same.stdout + same.stderr  # promote
    done = _cli("gate", "run", "--baseline", str(greenhouse.v1), "--candidate",
                str(greenhouse.v2), "--cases", str(greenhouse.cases), "--out",
                str(greenhouse.out / "gate"))  # fmt: skip
    assert done.returncode == 20, done.stdout + done.stderr  # block
    report = json.loads((greenhouse.out / "gate" / "report.json").read_text("utf-8"))
    assert report["decision"] == "block"
    # every case's gold chunk id (the required context) was not retrieved by release 2
    assert "1 of 1 required items not retrieved (gh-01)" in done.stdout
    assert "1 of 1 required items not retrieved (gh-07)" in done.stdout
    assert "New failures (passed in the baseline): 7" in done.stdout


def test_interventions_by_endpoint_find_the_gold_chunks_constructive(
    greenhouse: Greenhouse,
) -> None:
    out = greenhouse.out / "interventions"
    done = _cli("interventions", str(greenhouse.v1), "--cases", str(greenhouse.cases),
                "--endpoint", greenhouse.model_url, "--model", MODEL,
                "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["nothing_measured"] is None
    assert summary["failed_units"] == {}
    for operator in ("REMOVE", "REPLACE"):  # the gold chunk out: the answer loses its ground
        grounding = summary["operators"][operator]["axes"]["grounding"]
        assert (grounding["original_mean"], grounding["intervened_mean"]) == (1.0, 0.0)
        assert grounding["ci_low"] > 0 and grounding["n"] == len(CASES)
        correctness = summary["operators"][operator]["axes"]["correctness"]
        assert correctness["mean_delta"] == 1.0
    duplicate = summary["operators"]["DUPLICATE"]["axes"]["grounding"]
    assert duplicate["mean_delta"] == 0.0  # a copy of the gold chunk changes nothing
    assert summary["roles"]["counts"] == {"constructive": len(CASES)}
    # the one operator this data cannot feed is said not run, with the reason
    assert set(summary["not_run"]) == {"JOINT_REMOVE"}
    assert "fewer than two gold supporting chunks" in summary["not_run"]["JOINT_REMOVE"]


def _mean(out: Path, metric: str) -> float:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["metrics"][metric]["scored"] == len(CASES)
    return float(summary["metrics"][metric]["mean"])


def test_judge_run_scores_the_regressions_context_lower(greenhouse: Greenhouse) -> None:
    for name, traces in (("judge-v1", greenhouse.v1), ("judge-v2", greenhouse.v2)):
        done = _cli("judge", "run", str(traces), "--judge", "lexical", "--out",
                    str(greenhouse.out / name))  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert (
            f"{len(CASES)} cases judged ({len(CASES)} against retrieved documents), 0 need review"
            in (done.stdout)
        )
    v1, v2 = greenhouse.out / "judge-v1", greenhouse.out / "judge-v2"
    # release 2 retrieves the worst pages: less relevant context, answers still from it
    assert _mean(v2, "context_relevance") < _mean(v1, "context_relevance")
    assert _mean(v1, "adherence") == _mean(v2, "adherence") == 1.0


def test_paths_says_not_applicable_for_an_app_without_tools(greenhouse: Greenhouse) -> None:
    out = greenhouse.out / "paths"
    done = _cli("paths", str(greenhouse.v1), "--cases", str(greenhouse.cases), "--out", str(out))
    assert done.returncode == NOTHING_MEASURED, done.stdout + done.stderr
    assert "not applicable: no tool calls" in done.stdout
    assert "nothing measured" in done.stderr + done.stdout
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert {c["status"] for c in report["cases"]} == {"not_applicable"}


def test_audit_finds_the_planted_contradiction(greenhouse: Greenhouse) -> None:
    out = greenhouse.out / "audit"
    paths = greenhouse.audit
    done = _cli("audit", "run", "--sources", str(paths.sources), "--questions",
                str(paths.questions), "--answers", str(paths.answers),
                "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run = json.loads((out / "run.json").read_text("utf-8"))
    labels = {
        (p["question_id"], frozenset((p["source_a"], p["source_b"]))): p["label"]
        for p in run["pairs"]
    }
    assert labels == {
        ("watering-time", frozenset({"valley-coop", "hill-station"})): "contradictory",
        ("watering-time", frozenset({"coast-nursery", "hill-station"})): "contradictory",
        ("watering-time", frozenset({"valley-coop", "coast-nursery"})): "consistent",
        ("shade", frozenset({"valley-coop", "hill-station"})): "consistent",
        ("shade", frozenset({"valley-coop", "coast-nursery"})): "absent",
        ("shade", frozenset({"hill-station", "coast-nursery"})): "absent",
    }
    assert "disagreement prevalence" in done.stdout
