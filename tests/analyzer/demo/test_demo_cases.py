"""Loading HotpotQA-layout datasets for the demo app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.analyzer.errors import InputError
from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET, case_record, load_cases

ITEM = {
    "_id": "q1",
    "question": " Who? ",
    "answer": "Ann",
    "type": "bridge",
    "level": "hard",
    "supporting_facts": [["B", 0], ["A", 1], ["B", 2]],
    "context": [["A", ["a0.", " a1."]], ["B", ["b0."]]],
}


def test_shipped_sample_has_200_questions_with_stable_chunk_ids() -> None:
    cases = load_cases(DEFAULT_DATASET)
    assert len(cases) == 200
    first = cases[0]
    assert [c.id for c in first.passages][:2] == [f"{first.case_id}:0", f"{first.case_id}:1"]
    assert len(first.support_titles) == 2


def test_json_array_and_jsonl_give_the_same_case(tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text(json.dumps([ITEM]))
    lines = tmp_path / "a.jsonl"
    lines.write_text("\n" + json.dumps(ITEM) + "\n")
    (a,) = load_cases(array)
    (b,) = load_cases(lines)
    assert a == b
    assert a.question == "Who?"
    assert a.support_titles == ("B", "A")
    assert [(c.id, c.title, c.text) for c in a.passages] == [
        ("q1:0", "A", "a0. a1."),
        ("q1:1", "B", "b0."),
    ]
    assert case_record(a)["reference_answer"] == "Ann"


def test_bad_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(ITEM) + "\n{oops\n")
    with pytest.raises(InputError) as info:
        load_cases(bad)
    assert info.value.line == 2 and info.value.path == str(bad)
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({k: v for k, v in ITEM.items() if k != "answer"}) + "\n")
    with pytest.raises(InputError) as info:
        load_cases(missing)
    assert info.value.field == "answer"
