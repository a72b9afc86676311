"""The audit's input formats (docs/audit.md) and its run folder: one trace per answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.audit._inputs import load_answers, load_inputs, load_sources
from groundtrace.analyzer.cli._registry import build_app
from groundtrace.analyzer.errors import InputError
from tests.support.recycling_corpus import write_corpus

pytestmark = pytest.mark.timeout(120)


def test_a_folder_and_a_json_lines_file_give_the_same_sources(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    folder = {s.id: (s.group, s.text) for s in load_sources(paths.sources)}
    lines = {s.id: (s.group, s.text) for s in load_sources(paths.sources_jsonl)}
    assert folder == lines
    assert len(folder) == 5


def test_a_file_without_metadata_takes_its_id_from_its_name(tmp_path: Path) -> None:
    (tmp_path / "north-bay.txt").write_text("Glass is accepted.\n", "utf-8")
    (tmp_path / "south-bay.md").write_text(
        "---\nid: sb\ntitle: South\n---\nGlass is not.\n", "utf-8"
    )
    sources = load_sources(tmp_path)
    assert [(s.id, s.group, s.title) for s in sources] == [
        ("north-bay", "ungrouped", "north-bay"), ("sb", "ungrouped", "South"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("a.md", "---\ngroup: [x\n---\ntext", "a.md:"),
        ("a.md", "---\ncolour: red\n---\ntext", "a.md:1 [colour]"),
        ("a.md", "---\ntitle: A\n---\n\n", "a.md:4 [text]"),
    ],
)
def test_bad_source_files_are_named(tmp_path: Path, name: str, content: str, where: str) -> None:
    (tmp_path / "b.txt").write_text("Other text.\n", "utf-8")
    (tmp_path / name).write_text(content, "utf-8")
    with pytest.raises(InputError) as caught:
        load_sources(tmp_path)
    assert where in str(caught.value).replace(str(tmp_path) + "/", "")


def test_duplicate_ids_and_empty_text_in_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "utf-8")
    with pytest.raises(InputError, match=r"s.jsonl:2 \[id\]: duplicate source id 'a'"):
        load_sources(path)
    path.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": " "}\n', "utf-8")
    with pytest.raises(InputError, match=r"s.jsonl:2 \[text\]"):
        load_sources(path)


def test_a_second_question_or_answer_names_the_line_of_the_first(tmp_path: Path) -> None:
    sources = tmp_path / "s.jsonl"
    sources.write_text('{"id": "a", "text": "x"}\n\n{"id": "a", "text": "y"}\n', "utf-8")
    with pytest.raises(InputError) as caught:
        load_sources(sources)
    assert (caught.value.line, caught.value.field) == (3, "id")
    assert "duplicate source id 'a' (first on line 1)" in str(caught.value)
    paths = write_corpus(tmp_path / "corpus")
    corpus = load_inputs(paths.sources, paths.questions).corpus
    first = paths.questions.read_text("utf-8").splitlines()[0]
    questions = tmp_path / "q.jsonl"
    questions.write_text(f"{first}\n{first}\n", "utf-8")
    with pytest.raises(InputError) as caught:
        load_inputs(paths.sources, questions)
    asked = json.loads(first)["id"]
    assert (caught.value.line, caught.value.field) == (2, "id")
    assert f"duplicate question id {asked!r} (first on line 1)" in str(caught.value)
    row = {"question_id": "glass", "source_id": "lakeview", "answer": "Yes."}
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", "utf-8")
    with pytest.raises(InputError) as caught:
        load_answers(answers, corpus)
    assert (caught.value.line, caught.value.field) == (2, "source_id")
    assert "a second answer of source 'lakeview' to question 'glass' (first on line 1)" in str(
        caught.value
    )


def test_gold_and_answers_are_read_per_source(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    inputs = load_inputs(paths.sources, paths.questions)
    gold = {(g.question_id, g.source_id): (g.stance, g.points) for g in inputs.corpus.gold}
    assert gold[("batteries", "rivertown")] == ("yes", ("library",))
    assert gold[("pizza-boxes", "pinehill")] == ("no", ())
    answers = {(a.question_id, a.source_id): a for a in load_answers(paths.answers, inputs.corpus)}
    assert answers[("glass", "lakeview")].stance == "yes"
    assert answers[("glass", "lakeview")].points == ("at the depot",)
    assert answers[("collection", "oakridge")].stance == "conditional"
    assert answers[("depot-hours", "lakeview")].stance == "absent"  # no line: absent
    assert answers[("plastic-bags", "oakridge")].quote.startswith("Plastic bags")


def test_a_rerun_keeps_one_trace_per_answer(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    out = tmp_path / "run"
    args = ["audit", "run", "--sources", str(paths.sources), "--questions", str(paths.questions),
            "--out", str(out)]  # fmt: skip
    assert CliRunner().invoke(build_app(), args).exit_code == 0
    # what a driver killed between a trace's write and its answer's journaling leaves behind
    stray = out / "traces" / "traces-999999.jsonl"
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "audit_answer",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2"}  # fmt: skip
    stray.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    text = "".join(f.read_text("utf-8") for f in (out / "traces").glob("*.jsonl"))
    ids = set(re.findall(r'"traceId":\s*"([0-9a-f]{32})"', text))
    run = json.loads((out / "run.json").read_text("utf-8"))
    assert ids == {a["trace_id"] for a in run["answers"]}
