"""The config files of docs/analyses.md load as written, each into its analysis's record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from groundtrace.analyzer import get_analysis, load_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "analyses.md"
BLOCK = re.compile(r"```toml\n# groundtrace analyze (\w+) --config (\S+) [^\n]*\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str, str]]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_shows_a_config_for_every_built_in_analysis() -> None:
    assert sorted(name for name, _, _ in _blocks()) == [
        "attribution", "audit", "gate", "interventions", "judge", "paths",
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "file", "text"), _blocks(), ids=lambda v: str(v)[:14])
def test_each_config_loads_into_its_record(name: str, file: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / file
    path.write_text(text, encoding="utf-8")
    analysis = get_analysis(name)
    config = load_config(analysis, path)
    assert isinstance(config, analysis.config)
    for line in text.splitlines():
        key = line.split("=", 1)[0].strip()
        assert key in analysis.config.__struct_fields__, (name, key)
