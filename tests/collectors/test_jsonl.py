"""The shared JSONL reader: what it accepts and how it names bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.collectors.errors import InputError
from groundtrace.collectors.jsonl import read_jsonl


def test_rows_keep_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n\n# note\n{"a": 2}\n')
    assert list(read_jsonl(path, comments=True)) == [(1, {"a": 1}), (4, {"a": 2})]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}\n{"a": \n', r"a\.jsonl:2: invalid JSON"),
        ('{"a": 1}\n[1, 2]\n', r"a\.jsonl:2: expected a JSON object"),
        ('[{"a": 1},\n 3]', r"a\.jsonl:2: item 2 is not a JSON object"),
        ('[{"a": 1},\n {"a": 2}\n] 3', r"a\.jsonl:3: invalid JSON: extra data"),
    ],
)
def test_bad_lines_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(text)
    rows: list[tuple[int, object]] = []
    with pytest.raises(InputError, match=message):
        for row in read_jsonl(path, allow_array=True):
            rows.append(row)
    if text.startswith("{"):
        assert rows == [(1, {"a": 1})]  # what came before the bad line was delivered


def test_array_files_only_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('[{"a": 1},\n\n {"a": 2}]')
    assert [n for n, _ in read_jsonl(path, allow_array=True)] == [1, 3]  # the line it starts on
    with pytest.raises(InputError, match="invalid JSON"):
        list(read_jsonl(path))


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read case file"):
        list(read_jsonl(tmp_path / "missing.jsonl", what="case file"))
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        list(read_jsonl(binary))
