"""The demo runs every analysis the one way: its demo hook's config, through the one driver.

Each built-in analysis (the judge included) has a ``demo`` hook; the demo runs each one's
config with :func:`~groundtrace.analyzer.run_analysis`, and that config is the record
```groundtrace analyze NAME --config`` reads: written to a file and run there, it exits the
same and writes the same report (the audit's times its run: its exit code only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer import AnalysisRun, analyses, get_analysis
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.demo import DemoConfig, DemoResult, run_demo
from groundtrace.analyzer.metrics import normalise_answer

BUILT_IN = ("attribution", "audit", "gate", "interventions", "judge", "paths")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoResult, list[str]]:
    """A demo running every analysis, and the names the driver was called with, in order."""
    from groundtrace.analyzer.demo import _hooks

    called: list[str] = []
    real = _hooks.run_analysis

    def spy(analysis: Any, config: Any, **options: Any) -> AnalysisRun[Any]:
        called.append(analysis.name)
        return real(analysis, config, **options)

    out = tmp_path_factory.mktemp("demo") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_hooks, "run_analysis", spy)
        every = DemoConfig(model="lexical", questions=4, out=out, interventions=4, gate_top_k=2,
                           paths=True, audit_sources=3, judge=True, attribution=3)  # fmt: skip
        result = run_demo(every)
    return result, called


def test_every_built_in_analysis_has_a_demo_hook() -> None:
    assert set(BUILT_IN) <= set(analyses())
    assert all(get_analysis(name).demo is not None for name in BUILT_IN)


@pytest.mark.timeout(600)
def test_the_demo_runs_all_six_analyses_through_the_driver(demo) -> None:
    result, called = demo
    assert called == list(BUILT_IN)  # the judge included, each once, in the order of analyses()
    assert list(result.runs) == list(result.report.analyses) == list(BUILT_IN)
    for name, done in result.runs.items():
        shown = result.report.analyses[name]
        assert done.analysis == name and done.result is not None
        assert shown.report == str(done.reports[0])
        assert Path(shown.report).is_file()
        assert Path(shown.report).parent == result.config.out / name
        assert (shown.exit_code, shown.nothing_measured, shown.reading) == (
            done.exit_code, done.reason, done.reading,
        )  # fmt: skip
        assert shown.reading
    assert result.report.analyses["judge"].exit_code == 0
    # the gate's own code (0 promote, 10 review, 20 block, 30 not evaluable) is recorded
    gate = json.loads(Path(result.report.analyses["gate"].report).read_text())
    assert result.report.analyses["gate"].exit_code == gate["exit_code"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", BUILT_IN)
def test_each_demo_config_is_what_analyze_takes(demo, name: str, tmp_path: Path) -> None:
    result, _ = demo
    config = result.configs[name]
    assert isinstance(config, get_analysis(name).config)
    written = tmp_path / f"{name}.json"
    written.write_bytes(msgspec.json.encode(config))
    out = tmp_path / "out"
    ran = CliRunner().invoke(
        build_app(), ["analyze", name, "--config", str(written), "--out", str(out)]
    )
    assert ran.exit_code == result.report.analyses[name].exit_code, ran.output
    shown = Path(result.report.analyses[name].report)
    again = out / shown.name
    assert again.is_file(), ran.output
    if name in {"attribution", "gate", "judge", "paths"}:  # attribution: replayed again, same
        assert again.read_bytes() == shown.read_bytes()
    elif name == "interventions":  # the same run folder: the units come from its journal
        first, second = json.loads(shown.read_text()), json.loads(again.read_text())
        assert second.pop("calls")["from_journal"] == first.pop("calls")["run_now"] > 0
        assert second == first


def test_the_demo_options_set_the_analyses_configs(demo) -> None:
    result, _ = demo
    out = result.config.out
    interventions = result.configs["interventions"]
    assert (interventions.limit, interventions.operators) == (4, ("REMOVE", "REPLACE", "DUPLICATE"))
    assert interventions.out == str(out / "interventions")
    assert result.configs["judge"].traces == (str(out / "traces"),)
    attribution = result.configs["attribution"]  # attribution=3: the behavioural tier, 3 traces
    assert (attribution.traces, attribution.replay, attribution.limit) == (
        (str(out / "traces"),), "recorded", 3,
    )  # fmt: skip
    assert result.configs["gate"].candidate == (str(out / "candidate" / "traces"),)
    assert result.configs["paths"].traces == (str(out / "agent" / "traces"),)
    audit = result.configs["audit"]  # --audit-sources 3: the licence corpus's first 3 sources
    assert Path(audit.sources).parent == out / "audit" / "corpus"
    assert len(Path(audit.sources).read_text().splitlines()) == 3
    answered = json.loads((out / "audit" / "run.json").read_text())
    assert len(answered["sources"]) == 3


@pytest.mark.timeout(600)
def test_the_attribution_entry_holds_what_its_replays_measured(demo) -> None:
    """The demo's attribution entry is its run's: 3 answers replayed with every evidence
    item, then without each one; the count of answers that change, in its reading, is the
    count its report's rows show."""
    result, _ = demo
    shown = result.report.analyses["attribution"]
    assert shown.exit_code == 0 and shown.nothing_measured is None
    rows = json.loads((result.config.out / "attribution" / "attribution.json").read_text())["rows"]
    assert len(rows) == 3  # the limit, of 4 traces
    changed = 0
    for row in rows:
        assert row["tier"] == "behavioural" and row["passes"] == len(row["sources"]) + 1
        assert row["recorded_answer"] is None  # the lexical reader replays its own answer
        answer = normalise_answer(row["answer"])
        moved = [normalise_answer(s["answer_without"]) != answer for s in row["sources"]]
        assert [s["score"] >= 1.0 for s in row["sources"]] == moved  # changed: scored >= 1
        changed += any(moved)
    assert f"{changed} of 3 answer(s) change when one source is removed" in shown.reading
    assert changed > 0  # the lexical reader answers from one paragraph


def test_options_that_skip_an_analysis_leave_it_out(tmp_path: Path) -> None:
    result = run_demo(DemoConfig(model="lexical", questions=2, out=tmp_path / "d",
                                 interventions=2, operators=("ZERO",)))  # fmt: skip
    assert list(result.runs) == ["interventions"]
    assert result.configs["interventions"].operators == ("ZERO",)


def test_the_demo_starts_no_event_loop_of_its_own() -> None:
    """Only the driver (``run_analysis``) and the CLI entry start a loop: no ``asyncio.run``
    in the demo package nor its command."""
    import ast

    import groundtrace.analyzer.cli._demo as command
    import groundtrace.analyzer.demo as package

    files = [*Path(package.__file__).parent.glob("*.py"), Path(command.__file__)]
    calls = [
        f"{path.name}:{node.lineno}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "run"
        and isinstance(node.value, ast.Name) and node.value.id == "asyncio"
    ]  # fmt: skip
    assert len(files) > 5 and calls == []
