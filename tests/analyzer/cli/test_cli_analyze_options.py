"""``groundtrace analyze NAME``: every analysis, a plugin's too, gets its record's fields as
options over ``--config``; the friendly command and ``analyze`` take the same settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.analyzer.test_plugin_analysis import CASES, cli, plugin, write_run

__all__ = ["plugin"]  # the fixture, used by name


def test_a_plugins_record_fields_are_options_of_analyze(plugin: dict[str, str]) -> None:
    shown = cli(plugin, "analyze", "cited", "--help")
    assert shown.returncode == 0, shown.stderr
    for option in ("--config", "--out", "--traces", "--min-citations", "--model-url"):
        assert option in shown.stdout, option
    assert "Does each answer cite the evidence it was given?" in shown.stdout


def test_an_option_overrides_the_config_files_field(plugin: dict[str, str], tmp_path: Path) -> None:
    run = write_run(tmp_path / "harbour")
    (tmp_path / "empty").mkdir()
    config = tmp_path / "cited.toml"
    config.write_text(f'traces = ["{tmp_path / "empty"}"]\n', encoding="utf-8")
    base = ["analyze", "cited", "--config", str(config)]
    from_file = cli(plugin, *base, "--out", str(tmp_path / "a"))
    assert from_file.returncode == 6, from_file.stderr  # the file's traces: none
    over = cli(plugin, *base, "--traces", str(run / "traces"), "--out", str(tmp_path / "b"))
    assert over.returncode == 0, over.stderr
    rows = json.loads((tmp_path / "b" / "cited.json").read_text())
    assert len(rows["rows"]) == len(CASES)
    strict = cli(plugin, *base, "--traces", str(run / "traces"), "--min-citations", "1000",
                 "--out", str(tmp_path / "c"))  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    assert json.loads((tmp_path / "c" / "cited.json").read_text())["cited"] == 0
    assert rows["cited"] > 0


def test_without_a_config_file_the_options_are_the_record(
    plugin: dict[str, str], tmp_path: Path
) -> None:
    run = write_run(tmp_path / "harbour")
    done = cli(plugin, "analyze", "cited", "--traces", str(run / "traces"), "--out",
               str(tmp_path / "o"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["rows"]) == len(CASES)
    missing = cli(plugin, "analyze", "cited", "--out", str(tmp_path / "m"))
    assert missing.returncode == 2
    assert "traces" in missing.stderr and "--config" in missing.stderr
    bad = cli(plugin, "analyze", "cited", "--traces", "x", "--min-citations", "two",
              "--out", str(tmp_path / "m"))  # fmt: skip
    assert bad.returncode == 2 and "--min-citations" in bad.stderr
    assert not (tmp_path / "m").exists()


def test_paths_and_analyze_paths_take_the_same_options_and_write_the_same_reports(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app
    from tests.analyzer.test_paths_parity import _friendly, _same_reports, inputs

    folder = inputs.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    friendly = _friendly(folder, "traces.jsonl", tmp_path / "a")
    generic = CliRunner().invoke(build_app(), [
        "analyze", "paths", "--traces", str(folder / "traces.jsonl"),
        "--cases", str(folder / "cases.jsonl"), "--tools-config", str(folder / "tools.toml"),
        "--resamples", "300", "--seed", "11", "--out", str(tmp_path / "b"),
    ])  # fmt: skip
    assert (friendly.exit_code, generic.exit_code) == (0, 0), generic.output
    _same_reports(tmp_path / "a", tmp_path / "b")
    bad = CliRunner().invoke(build_app(), [
        "analyze", "paths", "--traces", str(folder / "traces.jsonl"),
        "--cases", str(folder / "cases.jsonl"), "--resamples", "0", "--out", str(tmp_path / "c"),
    ])  # fmt: skip
    assert bad.exit_code == 2
    assert "--resamples" in bad.output and not (tmp_path / "c").exists()


# -- the renamed options: the record names them, so both commands spell them alike -----------


def _invoke(*args: str) -> Any:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    return CliRunner().invoke(build_app(), list(args))


def _same_files(a: Path, b: Path, *names: str) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.timeout(300)
def test_format_is_the_trace_format_in_paths_and_analyze_paths(tmp_path: Path) -> None:
    from tests.support.data import DATA

    source = str(DATA / "agent_tools" / "tau_bench_traces" / "gpt-4o-airline_dev_40.jsonl")
    same = ("--cases", source, "--cases-format", "tau-bench", "--format", "transcript",
            "--resamples", "300")  # fmt: skip
    friendly = _invoke("paths", source, *same, "--out", str(tmp_path / "a"))
    generic = _invoke("analyze", "paths", "--traces", source, *same, "--out", str(tmp_path / "b"))
    assert (friendly.exit_code, generic.exit_code) == (0, 0), friendly.output + generic.output
    _same_files(tmp_path / "a", tmp_path / "b", "report.json", "summary.md", "report.html")
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert len(report["cases"]) == 40  # the transcripts were read as transcripts
    refused = _invoke("analyze", "paths", "--traces", source, "--trace-format", "transcript",
                      "--out", str(tmp_path / "c"))  # fmt: skip
    assert refused.exit_code == 2 and "No such option" in refused.output


def _gold(path: Path) -> Path:
    from tests.support.harbour_rag import CASES, PAGES

    rows = [
        {"id": f"g{i}", "topic": "ferry" if i % 3 else "pier",
         "item": {"question": f"{q} ({i})", "context": [PAGES[g][1]], "answer": PAGES[g][1]},
         "annotator_a": "pass", "annotator_b": "pass", "adjudicated": 1}
        for i, (_, q, g) in enumerate(CASES * 4)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.timeout(300)
def test_filter_and_judge_record_in_the_judge_and_gate_commands_and_analyze(
    tmp_path: Path,
) -> None:
    from tests.support.harbour_rag import write_run
    from tests.support.openai_server import OpenAICompatServer, Reply

    gold = str(_gold(tmp_path / "gold.jsonl"))
    scores = {"context_relevance": 0.9, "adherence": 0.8, "answer_relevance": 1, "rationale": "ok"}
    reply = Reply(content=json.dumps(scores), prompt_tokens=50)
    with OpenAICompatServer(handler=lambda _request: reply) as server:
        same = ("--gold", gold, "--filter", "topic=pier", "--judge", server.base_url,
                "--model", "m")  # fmt: skip
        friendly = _invoke("judge", "validate", *same, "--out", str(tmp_path / "a"))
        generic = _invoke("analyze", "judge", *same, "--out", str(tmp_path / "b"))
    assert (friendly.exit_code, generic.exit_code) == (0, 0), friendly.output + generic.output
    _same_files(tmp_path / "a", tmp_path / "b", "validation.json", "judgments.jsonl")
    judged = (tmp_path / "a" / "judgments.jsonl").read_text().splitlines()
    assert len(judged) == 8  # the rows of topic pier only (of 24)
    (record,) = (tmp_path / "a").glob("validation_record_*.json")

    v1, v2 = write_run(tmp_path / "v1"), write_run(tmp_path / "v2", wrong=True)
    same = ("--baseline", str(v1 / "traces"), "--candidate", str(v2 / "traces"),
            "--cases", str(v1 / "cases.jsonl"), "--judge", "lexical",
            "--judge-record", str(record))  # fmt: skip
    friendly = _invoke("gate", "run", *same, "--out", str(tmp_path / "c"))
    generic = _invoke("analyze", "gate", *same, "--out", str(tmp_path / "d"))
    assert friendly.exit_code == generic.exit_code == 20, friendly.output + generic.output
    _same_files(tmp_path / "c", tmp_path / "d", "report.json", "summary.md", "report.html")
    # the record is read by both: one that is not there is refused alike, before any report
    missing = [*same[:-1], str(tmp_path / "none.json")]
    refused = [_invoke(*command, *missing, "--out", str(tmp_path / "e"))
               for command in (("gate", "run"), ("analyze", "gate"))]  # fmt: skip
    assert [r.exit_code for r in refused] == [2, 2]
    said = f"{tmp_path / 'none.json'}:cannotread"  # as printed, whitespace aside (wrapped)
    assert all(said in "".join(r.output.split()) for r in refused)
    assert not (tmp_path / "e" / "report.json").exists()


@pytest.mark.timeout(300)
def test_replay_kwarg_in_interventions_and_analyze_interventions(tmp_path: Path) -> None:
    from tests.support.harbour_rag import write_run

    run = write_run(tmp_path / "harbour")
    traces, cases = str(run / "traces"), str(run / "cases.jsonl")
    same = ("--cases", cases, "--replay", "recorded", "--operators", "REMOVE",
            "--replay-kwarg", "tide=high")  # fmt: skip
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    friendly = _invoke("interventions", traces, *same, "--out", str(a))
    generic = _invoke("analyze", "interventions", "--traces", traces, *same, "--out", str(b))
    # the keyword argument reached the replayed function, which takes no ``tide``: every
    # replay fails alike, nothing measured (6)
    assert (friendly.exit_code, generic.exit_code) == (6, 6), friendly.output + generic.output
    said = "respond() got an unexpected keyword argument 'tide'"
    assert said in friendly.output and said in generic.output
    _same_files(a, b, "summary.json", "summary.md")
    plain = _invoke("interventions", traces, *same[:-2], "--out", str(c))
    assert plain.exit_code == 0, plain.output
    bad = [_invoke(*command, *same[:-1], "tide", "--out", str(tmp_path / "e"))
           for command in (("interventions", traces), ("analyze", "interventions", "--traces",
                                                        traces))]  # fmt: skip
    assert [r.exit_code for r in bad] == [2, 2]
    assert all("expected NAME=VALUE, got 'tide'" in r.output for r in bad)
    assert all("--replay-kwarg" in r.output for r in bad)
