"""Write-back knows no analysis: each analysis builds its own verdicts in its own package.

The old public builders of ``groundtrace.analyzer.writeback`` (``gate_verdicts``...) and the
backends' per-verdict helpers still import for one release, with a warning naming their
removal, and are the very functions the analyses use.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import groundtrace.analyzer.writeback as writeback

ANALYSES = ("gate", "paths", "judge", "interventions", "audit")
WRITEBACK = Path(writeback.__file__).parent


def test_no_module_of_write_back_imports_an_analysis() -> None:
    found = []
    for path in sorted(WRITEBACK.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                if any(name.startswith(f"groundtrace.analyzer.{a}") for a in ANALYSES):
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


@pytest.mark.parametrize(
    ("old", "home"),
    [
        ("gate_verdicts", "groundtrace.analyzer.gate._verdicts"),
        ("path_verdicts", "groundtrace.analyzer.paths._verdicts"),
        ("judge_verdicts", "groundtrace.analyzer.judge._verdicts"),
        ("role_verdicts", "groundtrace.analyzer.interventions._verdicts"),
        ("log_record", "groundtrace.analyzer.writeback._otlp"),
        ("phoenix_annotation", "groundtrace.analyzer.writeback._phoenix"),
        ("phoenix_name", "groundtrace.analyzer.writeback._phoenix"),
    ],
)
def test_an_old_name_still_imports_for_a_release_with_a_warning(old: str, home: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"writeback\.{old} .* removed in 0\.3\.0"):
        found = getattr(writeback, old)
    assert found is getattr(importlib.import_module(home), old)
    assert old not in writeback.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="label_score"):
        writeback.label_score
