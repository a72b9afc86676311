"""Every analysis has one way in: its friendly command and ``analyze NAME --config`` go
through the one driver, so on the same inputs they write the same reports and exit alike
(a blocked gate 20, nothing measured 6, a call ceiling 5); and every analysis runs from
inside a running event loop (``run_analysis_async``).

The inputs are small apps of domains the repository holds elsewhere only in other tests:
harbour operations (traces and cases, ``tests.support.harbour_rag``) and museum rules (the
audit's corpus), both written here.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result as CliResult
from typer.testing import CliRunner

from groundtrace.analyzer import AnalysisRun, analyses, get_analysis, run_analysis_async
from groundtrace.analyzer.cli import build_app
from tests.analyzer.audit.test_audit_shape import ANSWERS, MUSEUMS, QUESTIONS
from tests.analyzer.interventions.test_interventions_run import _answering, demo_dir
from tests.analyzer.paths.test_paths_shape import HIVES, TOOLS, _traces
from tests.support.harbour_rag import write_run
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

__all__ = ["demo_dir"]  # the module fixture, imported to be shared

pytestmark = pytest.mark.timeout(600)

app = build_app()


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the harbour app (``v1/``) and a run answering wrong (``v2/``)."""
    root = tmp_path_factory.mktemp("harbour")
    write_run(root / "v1")
    write_run(root / "v2", wrong=True)
    return root


def _lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture(scope="module")
def museums(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("museums")
    rows = [{"id": k, "group": group, "text": text} for k, (group, text) in MUSEUMS.items()]
    _lines(root / "museums.jsonl", rows)
    _lines(root / "questions.jsonl", QUESTIONS)
    _lines(root / "answers.jsonl", ANSWERS)
    _lines(root / "absent.jsonl", [a | {"answer": "Not stated."} for a in ANSWERS])
    return root


def _invoke(*args: str) -> CliResult:
    return CliRunner().invoke(app, list(args))


def _analyze(tmp_path: Path, name: str, config: dict[str, Any], out: Path, *more: str) -> CliResult:
    path = tmp_path / f"{name}-{out.name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return _invoke("analyze", name, "--config", str(path), "--out", str(out), *more)


def _same_files(a: Path, b: Path, names: tuple[str, ...]) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def _without(data: bytes, *fields: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(data)
    for name in fields:
        found.pop(name, None)
    return found


def test_interventions_command_and_analyze_write_the_same_reports(
    harbour: Path, tmp_path: Path
) -> None:
    traces, cases = str(harbour / "v1" / "traces"), str(harbour / "v1" / "cases.jsonl")
    a, b = tmp_path / "a", tmp_path / "b"
    friendly = _invoke("interventions", traces, "--cases", cases, "--replay", "recorded",
                       "--operators", "REMOVE", "--operators", "ZERO", "--out", str(a))  # fmt: skip
    config = {"out": str(b), "traces": [traces], "cases": cases, "replay": "recorded",
              "operators": ["REMOVE", "ZERO"]}  # fmt: skip
    analyzed = _analyze(tmp_path, "interventions", config, b)
    assert (friendly.exit_code, analyzed.exit_code) == (0, 0), friendly.output + analyzed.output
    _same_files(a, b, ("summary.json", "summary.md"))
    rows = [
        [
            _without(line, "counterfactual")
            for line in (d / "results.jsonl").read_bytes().splitlines()
        ]
        for d in (a, b)
    ]
    assert rows[0] == rows[1] and rows[0]


def test_judge_command_and_analyze_write_the_same_reports_and_exit_6_alike(
    harbour: Path, tmp_path: Path
) -> None:
    traces = str(harbour / "v1" / "traces")
    friendly = _invoke("judge", "run", traces, "--judge", "lexical", "--out", str(tmp_path / "a"))
    analyzed = _analyze(tmp_path, "judge", {"traces": [traces]}, tmp_path / "b")
    assert (friendly.exit_code, analyzed.exit_code) == (0, 0), friendly.output + analyzed.output
    _same_files(tmp_path / "a", tmp_path / "b", ("summary.json", "judgments.jsonl"))

    empty = _lines(tmp_path / "none.jsonl", [])
    friendly = _invoke("judge", "run", "--cases", str(empty), "--out", str(tmp_path / "c"))
    analyzed = _analyze(tmp_path, "judge", {"cases": str(empty)}, tmp_path / "d")
    assert (friendly.exit_code, analyzed.exit_code) == (6, 6), friendly.output + analyzed.output
    assert "nothing measured: no case to judge" in " ".join(analyzed.output.split())
    _same_files(tmp_path / "c", tmp_path / "d", ("summary.json", "judgments.jsonl"))


def _score(request: ServerRequest) -> Reply:
    return Reply(content='{"score": 1, "reason": "supported"}', prompt_tokens=50)


def test_a_call_ceiling_stops_the_command_and_analyze_alike(tmp_path: Path) -> None:
    rows = [{"id": f"c{i}", "question": f"q {i}?", "context": f"c {i}.", "answer": "a"}
            for i in range(6)]  # fmt: skip
    cases = str(_lines(tmp_path / "cases.jsonl", rows))
    with OpenAICompatServer(handler=_score) as server:
        judge = ("--judge", server.base_url, "--model", "m")
        friendly = _invoke("judge", "run", "--cases", cases, *judge, "--out", str(tmp_path / "a"),
                           "--max-calls", "2", "--concurrency", "1")  # fmt: skip
        assert friendly.exit_code == 5 and "--max-calls 2 reached" in friendly.output
        assert server.request_count == 2
        config = {"cases": cases, "judge": server.base_url, "model": "m"}
        analyzed = _analyze(tmp_path, "judge", config, tmp_path / "b", "--max-calls", "2",
                            "--concurrency", "1")  # fmt: skip
        assert analyzed.exit_code == 5 and "--max-calls 2 reached" in analyzed.output
        assert server.request_count == 4  # the same ceiling: 2 more calls, none past it


def test_audit_command_and_analyze_write_the_same_run_and_exit_6_alike(
    museums: Path, tmp_path: Path
) -> None:
    corpus = ("--sources", str(museums / "museums.jsonl"), "--questions",
              str(museums / "questions.jsonl"))  # fmt: skip
    for answers, code in (("answers.jsonl", 0), ("absent.jsonl", 6)):
        a, b = tmp_path / f"a-{code}", tmp_path / f"b-{code}"
        given = str(museums / answers)
        friendly = _invoke("audit", "run", *corpus, "--answers", given, "--out", str(a))
        config = {"out": str(b), "sources": corpus[1], "questions": corpus[3], "answers": given}
        analyzed = _analyze(tmp_path, "audit", config, b)
        assert (friendly.exit_code, analyzed.exit_code) == (code, code), (
            friendly.output + analyzed.output
        )
        runs = [_without((d / "run.json").read_bytes(), "wall_seconds", "out") for d in (a, b)]
        assert runs[0] == runs[1]


def test_gate_command_and_analyze_block_alike(harbour: Path, tmp_path: Path) -> None:
    v1, v2 = harbour / "v1", harbour / "v2"
    runs = ("--baseline", str(v1 / "traces"), "--candidate", str(v2 / "traces"),
            "--cases", str(v1 / "cases.jsonl"))  # fmt: skip
    friendly = _invoke("gate", "run", *runs, "--out", str(tmp_path / "a"))
    config = {"baseline": [runs[1]], "candidate": [runs[3]], "cases": runs[5]}
    analyzed = _analyze(tmp_path, "gate", config, tmp_path / "b")
    assert (friendly.exit_code, analyzed.exit_code) == (20, 20), friendly.output + analyzed.output


def _configs(harbour: Path, museums: Path, tmp_path: Path) -> dict[str, Any]:
    """A config of every built-in analysis."""
    from groundtrace.analyzer import audit, gate, interventions, judge, paths

    (tmp_path / "hives.jsonl").write_text("".join(t.to_json() + "\n" for t in _traces()))
    hive_cases = [
        {"id": c, "question": q, "reference_answer": a, "required_reads": [note],
         "required_values": [a]}
        for c, q, note, a in HIVES
    ]  # fmt: skip
    _lines(tmp_path / "hive_cases.jsonl", hive_cases)
    (tmp_path / "tools.toml").write_text(TOOLS)
    v1, v2 = str(harbour / "v1" / "traces"), str(harbour / "v2" / "traces")
    cases = str(harbour / "v1" / "cases.jsonl")
    return {
        "interventions": interventions.Config(
            out=str(tmp_path / "interventions"), traces=(v1,), cases=cases, operators=("REMOVE",)
        ),
        "judge": judge.Config(traces=(v1,)),
        "gate": gate.Config(baseline=(v1,), candidate=(v2,), cases=cases),
        "paths": paths.Config(
            traces=(str(tmp_path / "hives.jsonl"),),
            cases=str(tmp_path / "hive_cases.jsonl"),
            tools_config=str(tmp_path / "tools.toml"),
            resamples=300,
            seed=11,
        ),
        "audit": audit.Config(
            out=str(tmp_path / "audit"),
            sources=str(museums / "museums.jsonl"),
            questions=str(museums / "questions.jsonl"),
            answers=str(museums / "answers.jsonl"),
        ),
    }


def test_every_analysis_runs_from_inside_a_running_event_loop(
    harbour: Path, museums: Path, tmp_path: Path
) -> None:
    configs = _configs(harbour, museums, tmp_path)
    assert set(configs) == {"interventions", "judge", "gate", "paths", "audit"}
    assert set(configs) <= set(analyses())

    async def service() -> dict[str, AnalysisRun[Any]]:
        asyncio.get_running_loop()  # as in a notebook or an async service
        done = {}
        for name, config in configs.items():
            done[name] = await run_analysis_async(
                get_analysis(name), config, out=tmp_path / f"{name}-reports"
            )
        return done

    done = asyncio.run(service())
    for name, ran in done.items():
        assert ran.result is not None and ran.reports and ran.reports[0].is_file(), name
        assert ran.reading, name
    assert {n: r.exit_code for n, r in done.items()} == {
        "interventions": 0, "judge": 0, "gate": 20, "paths": 0, "audit": 0,
    }  # fmt: skip
    judged = done["judge"].result
    assert judged is not None and judged.judgments  # the harbour answers were judged


def test_analyze_interventions_honours_the_ceiling_as_the_command_does(
    demo_dir: Path, tmp_path: Path
) -> None:
    """Before the one driver, ``analyze interventions`` could not cap its calls."""
    traces, cases = str(demo_dir / "traces"), str(demo_dir / "cases.jsonl")
    with OpenAICompatServer(handler=_answering) as server:
        endpoint = ("--endpoint", server.base_url, "--model", "m")
        friendly = _invoke("interventions", traces, "--cases", cases, *endpoint, "--operators",
                           "REMOVE", "--out", str(tmp_path / "a"), "--max-calls", "2",
                           "--concurrency", "1")  # fmt: skip
        assert friendly.exit_code == 5 and "--max-calls 2 reached" in friendly.output
        assert server.request_count == 2
        config = {"out": str(tmp_path / "b"), "traces": [traces], "cases": cases,
                  "endpoint": server.base_url, "model": "m", "operators": ["REMOVE"],
                  "concurrency": 1}  # fmt: skip
        analyzed = _analyze(tmp_path, "interventions", config, tmp_path / "b", "--max-calls",
                            "2", "--concurrency", "1")  # fmt: skip
        assert analyzed.exit_code == 5 and "--max-calls 2 reached" in analyzed.output
        assert server.request_count == 4


def test_analyze_audit_estimates_the_calls_the_command_estimates(
    museums: Path, tmp_path: Path
) -> None:
    corpus = ("--sources", str(museums / "museums.jsonl"), "--questions",
              str(museums / "questions.jsonl"))  # fmt: skip
    with OpenAICompatServer(handler=_score) as server:
        answerer = ("--endpoint", server.base_url, "--model", "m")
        friendly = _invoke("audit", "run", *corpus, *answerer, "--out", str(tmp_path / "a"),
                           "--estimate", "--json")  # fmt: skip
        config = {"out": str(tmp_path / "b"), "sources": corpus[1], "questions": corpus[3],
                  "endpoint": server.base_url, "model": "m"}  # fmt: skip
        analyzed = _analyze(tmp_path, "audit", config, tmp_path / "b", "--estimate", "--json")
        assert server.request_count == 0  # nothing is sent
    assert (friendly.exit_code, analyzed.exit_code) == (0, 0), friendly.output + analyzed.output
    said = [json.loads(r.stdout) for r in (friendly, analyzed)]
    assert said[0]["requests"] == said[1]["requests"] == len(ANSWERS)  # one per answer
    assert said[0]["calls"] == said[1]["calls"]
    assert not (tmp_path / "b").exists()
