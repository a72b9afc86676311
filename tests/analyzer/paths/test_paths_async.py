"""Command-path validation inside a running event loop (a notebook, an async service).

``validate_traces_async`` is awaited in the caller's loop and starts none of its own; the sync
``validate_traces`` stays for one release, deprecated, and starts no loop either (before, it
called ``asyncio.run`` once per chunk, which fails inside a running loop). The data is the
beekeeping agent of ``test_paths_shape``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.analyzer.cases import Case, read_cases
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.paths import (
    PathReport,
    ToolsConfig,
    load_tools_config,
    validate_traces,
    validate_traces_async,
)
from groundtrace.analyzer.stats import StatsSettings
from tests.analyzer.paths.test_paths_shape import HIVES, TOOLS, _traces

SETTINGS = StatsSettings(n_resamples=200, seed=5)
#: The package's sources, docstrings included.
PATHS_SOURCES = sorted((Path(__file__).parents[3] / "analyzer" / "paths").glob("*.py"))


@pytest.fixture
def hives(tmp_path: Path) -> tuple[list[Case], ToolsConfig]:
    rows = [
        {"id": c, "question": q, "reference_answer": a, "required_reads": [note]}
        for c, q, note, a in HIVES
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tools.toml").write_text(TOOLS)
    return list(read_cases(tmp_path / "cases.jsonl")), load_tools_config(tmp_path / "tools.toml")


def _statuses(report: PathReport) -> list[tuple[str, str]]:
    return [(v.case_id, v.status.value) for v in report.verdicts]


async def test_the_validation_is_awaited_in_the_callers_running_loop(
    hives: tuple[list[Case], ToolsConfig],
) -> None:
    cases, tools = hives
    report = await validate_traces_async(_traces(), cases, tools, settings=SETTINGS)
    assert _statuses(report) == [("swarm", "pass"), ("harvest", "both_failed")]
    assert report.missing_traces == ("mites",) and report.unmatched_count == 1
    # on an executor of the caller's: the same report
    on_two = await validate_traces_async(
        _traces(), cases, tools, settings=SETTINGS, executor=LocalExecutor(2)
    )
    assert on_two == report


async def test_the_deprecated_sync_validation_warns_and_starts_no_loop(
    hives: tuple[list[Case], ToolsConfig],
) -> None:
    cases, tools = hives
    expected = await validate_traces_async(_traces(), cases, tools, settings=SETTINGS)
    # called from a running loop: no nested event loop, the same report
    with pytest.warns(DeprecationWarning) as warned:
        report = validate_traces(_traces(), cases, tools, settings=SETTINGS)
    assert report == expected
    (warning,) = warned
    message = str(warning.message)
    assert "validate_traces is deprecated since groundtrace 0.2.0" in message
    assert "removed in 0.3.0" in message and "validate_traces_async" in message


def test_the_deprecated_sync_validation_refuses_an_executor(
    hives: tuple[list[Case], ToolsConfig],
) -> None:
    cases, tools = hives
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigError) as err:
        validate_traces(_traces(), cases, tools, executor=LocalExecutor(1))
    assert err.value.field == "executor" and "await validate_traces_async" in str(err.value)


def test_no_module_of_paths_starts_an_event_loop() -> None:
    assert PATHS_SOURCES, "the paths package's sources were not found"
    started = [p.name for p in PATHS_SOURCES if "asyncio.run(" in p.read_text(encoding="utf-8")]
    assert started == []
