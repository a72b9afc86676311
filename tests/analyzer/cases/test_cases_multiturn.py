"""BFCL multi-turn files read into cases turn by turn (before: refused, ``question`` was read
as the case model's string field).

The files are written from BFCL's format: a question row holds ``question`` (a list of turns,
each a list of messages), ``initial_config``, ``path`` and ``involved_classes``; its ground
truth, in ``possible_answer/`` under the same name, one list of call strings per turn.
Function docs (``multi_turn_func_doc/``) name the positional arguments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groundtrace.analyzer.cases import RequiredCall, read_cases
from groundtrace.analyzer.errors import InputError

QUESTION = {
    "id": "multi_turn_base_0",
    "question": [
        [{"role": "user", "content": "Go to the seed-trays folder and make a folder 'basil'."}],
        [{"role": "user", "content": "Sort the sowing log."}],
        [],
    ],
    "initial_config": {"GorillaFileSystem": {"root": {"greenhouse": {"type": "directory"}}}},
    "path": ["GorillaFileSystem.cd", "GorillaFileSystem.mkdir", "GorillaFileSystem.sort"],
    "involved_classes": ["GorillaFileSystem"],
}
TRUTH = {
    "id": "multi_turn_base_0",
    "ground_truth": [
        ["cd(folder='seed-trays')", "mkdir(dir_name='basil')"],
        ["sort('sowing_log.txt')"],
        [],
    ],
}
DOCS = [
    {"name": "cd", "description": "Change directory.", "parameters": {
        "type": "dict", "properties": {"folder": {"type": "string"}}, "required": ["folder"]}},
    {"name": "sort", "description": "Sort a file.", "parameters": {
        "type": "dict", "properties": {"file_name": {"type": "string"}},
        "required": ["file_name"]}},
]  # fmt: skip


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _files(tmp_path: Path, truth: dict[str, Any] = TRUTH, docs: bool = True) -> Path:
    name = "BFCL_v4_multi_turn_base.json"
    _jsonl(tmp_path / "possible_answer" / name, [truth])
    if docs:
        _jsonl(tmp_path / "multi_turn_func_doc" / "gorilla_file_system.json", DOCS)
    return _jsonl(tmp_path / name, [QUESTION])


def test_a_multi_turn_file_reads_into_turns(tmp_path: Path) -> None:
    (case,) = read_cases(_files(tmp_path))
    assert case.case_id == "multi_turn_base_0"
    assert [t.question for t in case.turns] == [
        "Go to the seed-trays folder and make a folder 'basil'.", "Sort the sowing log.", None,
    ]  # fmt: skip
    assert [t.required_calls for t in case.turns] == [
        (RequiredCall("cd", {"folder": ["seed-trays"]}),
         RequiredCall("mkdir", {"dir_name": ["basil"]})),
        (RequiredCall("sort", {"file_name": ["sowing_log.txt"]}),),  # positional, named
        (),
    ]  # fmt: skip
    assert case.required_calls == ()
    assert case.metadata["involved_classes"] == ["GorillaFileSystem"]
    assert case.metadata["initial_config"] == QUESTION["initial_config"]
    assert {t.name for t in case.tools} == {"cd", "sort"}


def test_literal_arguments_of_every_kind(tmp_path: Path) -> None:
    truth = {**TRUTH, "ground_truth": [
        ["edit_ticket(ticket_id=654321, updates={'priority': 2})"],
        ["mean(numbers=[3, 16, 60])", "ls(a=True)"], []]}  # fmt: skip
    (case,) = read_cases(_files(tmp_path, truth))
    edit, (mean, ls), _ = (t.required_calls for t in case.turns)
    assert edit == (RequiredCall("edit_ticket", {"ticket_id": [654321],
                                                 "updates": [{"priority": [2]}]}),)  # fmt: skip
    assert mean.arguments == {"numbers": [[3, 16, 60]]} and ls.arguments == {"a": [True]}


@pytest.mark.parametrize(
    ("truth", "docs", "field", "words"),
    [
        ([["cd(folder=x)"], [], []], True, "ground_truth[0][0]", "not a literal"),
        ([["cd(folder='a'"], [], []], True, "ground_truth[0][0]", "not a function call"),
        ([["sort('log')"], [], []], False, "ground_truth[0][0]", "multi_turn_func_doc"),
        ([["cd(folder='a')"], []], True, "ground_truth", "2 ground-truth turn(s) for 3"),
        ("cd(folder='a')", True, "ground_truth", "list of turns"),
    ],
)
def test_bad_ground_truth_names_file_line_and_field(
    tmp_path: Path, truth: Any, docs: bool, field: str, words: str
) -> None:
    path = _files(tmp_path, {**TRUTH, "ground_truth": truth}, docs)
    with pytest.raises(InputError) as err:
        list(read_cases(path))
    assert err.value.field == field and err.value.line == 1
    assert str(err.value.path).endswith("possible_answer/BFCL_v4_multi_turn_base.json")
    assert words in str(err.value)


def test_a_missing_ground_truth_file_is_named(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "BFCL_v4_multi_turn_base.json", [QUESTION])
    with pytest.raises(InputError, match="possible_answer"):
        list(read_cases(path))


def test_turns_in_the_case_models_own_layout(tmp_path: Path) -> None:
    row = {"id": "greenhouse-1", "turns": [
        {"question": "Open the vents", "required_calls": [
            {"name": "set_vent", "arguments": {"percent": [40]}}]},
        {"question": "What is the humidity?", "required_values": ["71%"]}]}  # fmt: skip
    (case,) = read_cases(_jsonl(tmp_path / "cases.jsonl", [row]))
    assert case.turns[0].required_calls == (RequiredCall("set_vent", {"percent": [40]}),)
    assert case.turns[1].required_values == ("71%",)
