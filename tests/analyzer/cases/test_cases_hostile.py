"""Hostile case files: a nesting bomb and invalid UTF-8 are refused naming file, line, field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import InputError

DEPTH = 100_000


def bomb(depth: int = DEPTH) -> str:
    """A case row whose ``metadata`` holds ``depth`` nested lists."""
    return '{"id": "deep", "question": "q", "metadata": {"x": ' + "[" * depth + "]" * depth + "}}"


@pytest.mark.timeout(60)
def test_a_nesting_bomb_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "ok"}) + "\n" + bomb() + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply") as info:
        list(read_cases(path))
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, "metadata")


@pytest.mark.timeout(60)
def test_a_nesting_bomb_in_a_json_array_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text('[\n{"id": "ok"},\n' + bomb() + "\n]\n", encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply") as info:
        list(read_cases(path))
    assert (info.value.line, info.value.field) == (3, "metadata")


@pytest.mark.timeout(60)
def test_a_row_nested_within_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(bomb(50) + "\n", encoding="utf-8")
    (case,) = read_cases(path)
    assert case.case_id == "deep"


@pytest.mark.timeout(60)
def test_invalid_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a"}\n\n{"id": "b", "question": "caf\xe9"}\n')
    with pytest.raises(InputError, match="not UTF-8") as info:
        list(read_cases(path))
    assert (info.value.path, info.value.line) == (str(path), 3)
    assert f"{path}:3" in str(info.value)


@pytest.mark.timeout(120)
def test_paths_exits_2_on_a_nesting_bomb(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(bomb() + "\n", encoding="utf-8")
    traces = tmp_path / "traces"
    traces.mkdir()
    result = CliRunner().invoke(
        build_app(), ["paths", str(traces), "--cases", str(cases), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    assert f"{cases}:1 [metadata]" in result.output
    assert "nested too deeply" in result.output
    assert "Traceback" not in result.output
