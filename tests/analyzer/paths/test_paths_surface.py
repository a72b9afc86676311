"""The public surface of ``groundtrace.analyzer.paths``: its shape, the records a user reads,
its extension points and user functions; old names keep working one release, with a warning."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from groundtrace.analyzer import paths
from groundtrace.analyzer.paths._outcome import PathsResult


def test_the_result_is_paths_result_and_path_run_is_its_deprecated_name() -> None:
    assert paths.ANALYSIS.name == "paths" and "PathsResult" in paths.__all__
    assert "PathRun" not in paths.__all__
    with pytest.warns(DeprecationWarning) as warned:
        from groundtrace.analyzer.paths import PathRun
    assert PathRun is PathsResult
    assert {str(w.message) for w in warned} == {
        "groundtrace.analyzer.paths.PathRun is deprecated since groundtrace 0.2.0 and is "
        "removed in 0.3.0: use groundtrace.analyzer.paths.PathsResult"
    }


#: What a user of the package reads, calls or extends (the shape, its records, the tools
#: config, the validation of traces in code).
SURFACE = {
    "ANALYSIS", "Config", "plan", "run", "write_report", "reading", "nothing_measured",
    "verdicts", "PathsResult", "PathReport", "CaseVerdict", "PathStatus", "PathMetrics",
    "ToolsConfig", "load_tools_config", "validate_traces_async",
}  # fmt: skip
#: The names exported before 0.2.0 that are internals now: (name, its private module).
DROPPED = [
    ("AIRLINE_WRITE_TOOLS", "_tau"), ("CITATION_STATUSES", "_validate"),
    ("COMMAND_STATUSES", "_validate"), ("DEFAULT_QUOTE_THRESHOLD", "_quotes"),
    ("STATUS_PRECEDENCE", "_types"), ("CallError", "_types"), ("CallErrorCode", "_types"),
    ("CallMatch", "_calls"), ("ExecutedCall", "_calls"), ("MetricValue", "_metrics"),
    ("QuoteMatch", "_quotes"), ("UnreadableLine", "_outcome"), ("best_quote_match", "_quotes"),
    ("check_calls", "_calls"), ("check_item", "_bfcl"), ("compute_metrics", "_metrics"),
    ("concrete_calls", "_bfcl"), ("tau_bench_cases", "_tau"), ("validate_case", "_validate"),
    ("validate_conversation", "_turns"),
]  # fmt: skip
ANALYZER = Path(paths.__file__).parents[1]


def test_the_package_exports_its_shape_records_and_user_functions_only() -> None:
    assert set(paths.__all__) == SURFACE and len(paths.__all__) == len(SURFACE) <= 16
    assert all(hasattr(paths, name) for name in paths.__all__)


@pytest.mark.parametrize(("name", "home"), DROPPED, ids=[n for n, _ in DROPPED])
def test_a_dropped_name_still_imports_for_a_release_with_a_warning(name: str, home: str) -> None:
    assert name not in paths.__all__
    module = importlib.import_module(f"groundtrace.analyzer.paths.{home}")
    with pytest.warns(DeprecationWarning) as warned:
        found = getattr(paths, name)
    assert found is getattr(module, name)
    assert str(warned[0].message) == (
        f"groundtrace.analyzer.paths.{name} is deprecated since groundtrace 0.2.0 and is "
        f"removed in 0.3.0: use groundtrace.analyzer.paths.{home}.{name}"
    )


def test_no_other_analyzer_package_imports_a_dropped_name() -> None:
    dropped = {name for name, _ in DROPPED} | {"PathRun", "validate_traces"}
    used = []
    for path in sorted(ANALYZER.rglob("*.py")):
        if path.parent.name == "paths" and path.parent.parent == ANALYZER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "groundtrace.analyzer.paths":
                used += [f"{path.name}: {a.name}" for a in node.names if a.name in dropped]
    assert used == []
