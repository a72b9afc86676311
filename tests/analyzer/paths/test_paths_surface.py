"""The public surface of ``groundtrace.analyzer.paths``: its shape, the records a user reads,
its extension points and user functions; old names keep working one release, with a warning."""

from __future__ import annotations

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
