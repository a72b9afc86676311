"""The quick start of docs/quickstart.md, run as written: its Python block as ``app.py`` in an
empty folder (a fresh interpreter), its case file, then each command of its shell block.

The page defines every name it uses (the README's quick start used ``client`` and ``MODEL``
without defining them), so a reader can paste it and run it; this test keeps it so.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "quickstart.md"
BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(DOC.read_text("utf-8")) if lang == language]


@pytest.mark.integration  # the page starts a model server (127.0.0.1) in its own process
@pytest.mark.timeout(180)
def test_the_quick_start_runs_as_written(tmp_path: Path) -> None:
    (app,) = _blocks("python")
    (cases,) = _blocks("json")
    (commands,) = _blocks("bash")
    (tmp_path / "app.py").write_text(app, "utf-8")
    (tmp_path / "cases.jsonl").write_text(cases, "utf-8")
    ran = subprocess.run(
        [sys.executable, "app.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["14", "2"]  # the two answers, each from its gold chunk
    assert list((tmp_path / "traces").glob("*.jsonl")), "the app wrote no trace file"
    for line in commands.strip().splitlines():
        argv = shlex.split(line)
        assert argv[0] == "groundtrace", line
        done = subprocess.run(
            [str(BIN / "groundtrace"), *argv[1:]],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    summary = subprocess.run(
        [str(BIN / "groundtrace"), "traces", "summary", "traces/", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    steps = json.loads(summary.stdout)["steps_by_action"]
    assert {a: steps.get(a) for a in ("REQUEST", "RETRIEVE", "ANSWER", "LLM")} == dict.fromkeys(
        ("REQUEST", "RETRIEVE", "ANSWER", "LLM"), 2
    )
    judged = json.loads((tmp_path / "judge" / "summary.json").read_text("utf-8"))
    assert judged["cases"] == 2
    gate = json.loads((tmp_path / "gate" / "report.json").read_text("utf-8"))
    assert gate["decision"] == "promote"
    # the page's last line: the interventions replay the app by importing app.py, which must
    # not run the app again (it did: two more traces in the user's traces/ after a replay)
    replayed = subprocess.run(
        [str(BIN / "groundtrace"), "interventions", "traces/", "--replay", "recorded",
         "--cases", "cases.jsonl", "--out", "interventions/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    after = subprocess.run(
        [str(BIN / "groundtrace"), "traces", "summary", "traces/", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(after.stdout)["steps_by_action"]["REQUEST"] == 2


JUDGE_DOC = DOC.with_name("judge.md")


def _judge_blocks(language: str) -> list[str]:
    found = _BLOCK.findall(JUDGE_DOC.read_text("utf-8"))
    return [body for lang, body in found if lang == language]


def test_the_judge_page_shows_the_prompt_and_schema_the_judge_sends() -> None:
    from groundtrace.analyzer.judge import JudgeCase
    from groundtrace.analyzer.judge._llm_judge import build_prompt
    from groundtrace.analyzer.judge._rubric import DEFAULT_RUBRIC, OUTPUT_SCHEMA

    example = next(b for b in _judge_blocks("text") if "QUESTION:\nWhen should" in b)
    head, _, rest = example.partition("\n\nQUESTION:\n")
    question, _, rest = rest.partition("\n\nCONTEXT:\n")
    context, _, rest = rest.partition("\n\nANSWER:\n")
    answer = rest.removesuffix("\n").removesuffix("\n\nJSON:")
    case = JudgeCase("g5", question, tuple(context.split("\n\n")), answer)
    assert head == DEFAULT_RUBRIC.text.strip()
    assert build_prompt(DEFAULT_RUBRIC, case) + "\n" == example
    schemas = [json.loads(b) for b in _judge_blocks("json") if '"required"' in b]
    assert schemas == [OUTPUT_SCHEMA]


def test_the_judge_pages_bad_reply_counts_as_it_says() -> None:
    from groundtrace.analyzer.judge import Metric
    from groundtrace.analyzer.judge._protocol import parse_judge_reply

    reply = (
        '{"context_relevance": 1.005, "adherence": "high", "answer_relevance": 1.2, '
        '"rationale": "..."}'
    )
    assert f"`{reply}`" in JUDGE_DOC.read_text("utf-8")
    scores, _, errors = parse_judge_reply(reply, "stop")
    assert scores == {Metric.CONTEXT_RELEVANCE: 1.0}
    assert {(e.metric, e.kind.value) for e in errors} == {
        (Metric.ADHERENCE, "non_numeric"),
        (Metric.ANSWER_RELEVANCE, "out_of_range"),
    }


def test_the_case_pages_rows_read_as_it_says() -> None:
    from groundtrace.analyzer.cases import parse_case

    page = DOC.with_name("cases.md").read_text("utf-8")
    rows = [json.loads(b) for lang, b in _BLOCK.findall(page) if lang == "json"]
    rag, agent, item = (parse_case(row, path="docs/cases.md") for row in rows)
    assert rag.support_titles == ("gh-05",) and rag.expected_terms == ("85",)
    assert [p.text for p in rag.passages] == [rows[0]["distractors"][0]["text"]]
    assert agent.required_reads == ("manuals/climate.md",)
    assert agent.required_calls[0].arguments["section"] == ["alarms", ""]
    assert agent.allowed_commands == ("search_documents", "read_document")
    assert (item.response, len(item.passages)) == ("Above 85 percent humidity.", 1)
