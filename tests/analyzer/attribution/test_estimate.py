"""``--estimate`` and ``--max-calls`` of the attribution analysis: passes are its model calls.

The estimate's calls are the passes the run then makes (the loopback server counts the
requests), by method; a trace the journal holds makes none; ``--max-calls`` stops the run
after the trace that reached it (exit 5, what finished kept), the same from both commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.attribution._shape import ANALYSIS, Config
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import BudgetReachedError, ConfigError
from groundtrace.analyzer.llm import Budget
from tests.analyzer.attribution import test_analysis
from tests.analyzer.attribution.test_analysis import _trace
from tests.analyzer.attribution.test_endpoint_scorer import _Server

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    made = [_trace("t1", "twelve metres", ("p1", "p2", "p3")), _trace("t2", "south quay barge",
            ("p3", "p1"))]  # fmt: skip
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.to_json() + "\n" for t in made))
    return path


def _url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _passes(server: _Server) -> int:
    """The requests that scored (not the chat form's refused probe, one per scorer)."""
    return sum("messages" not in body for body in server.bodies)


@pytest.mark.parametrize(
    ("method", "calls"), [("leave-one-out", 5 + 4), ("shapley", 8 + 4), ("contextcite", None)]
)
def test_the_estimate_is_the_passes_the_run_makes(
    server: _Server, traces: Path, tmp_path: Path, method: str, calls: int | None
) -> None:
    config = Config(traces=(str(traces),), endpoint=_url(server), method=method)  # type: ignore[arg-type]
    out = tmp_path / "out"
    found = run_analysis(ANALYSIS, config, out=out, estimate=True).estimate
    assert found is not None and not out.exists() and server.bodies == []
    assert calls is None or found.calls == calls
    assert found.units_done == 0 and found.dependent == 0 and found.prompt_tokens > 0
    done = run_analysis(ANALYSIS, config, out=out)
    assert _passes(server) == found.calls
    assert sum(u.calls for u in done.calls.values()) == found.calls  # the run's ledger
    again = run_analysis(ANALYSIS, config, out=out, estimate=True).estimate
    assert again is not None and (again.units_done, again.calls) == (2, 0)


def test_hierarchical_estimates_its_dependent_passes(
    server: _Server, traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = {"p1": "Pilots board at the Eastern buoy. They wait at dawn.",
             "p2": "Berth seven is deep. It has a charted depth of twelve metres."}  # fmt: skip
    monkeypatch.setattr(test_analysis, "PAGES", pages)
    traces.write_text(_trace("t1", "twelve metres", ("p1", "p2")).to_json() + "\n")
    config = Config(traces=(str(traces),), endpoint=_url(server), method="hierarchical",
                    max_passes=6)  # fmt: skip
    found = run_analysis(ANALYSIS, config, out=tmp_path / "h", estimate=True).estimate
    assert found is not None and found.dependent > 0
    assert (found.calls, found.dependent) == (1 + 2 + 1, 6 - 1 - 2)
    run_analysis(ANALYSIS, config, out=tmp_path / "h")
    assert found.calls < _passes(server) <= found.calls + found.dependent


def test_max_calls_counts_passes_and_stops_the_run(
    server: _Server, traces: Path, tmp_path: Path
) -> None:
    config = Config(traces=(str(traces),), endpoint=_url(server))
    with pytest.raises(BudgetReachedError, match="--max-calls 3 reached"):
        run_analysis(ANALYSIS, config, out=tmp_path / "b", budget=Budget(max_calls=3),
                     concurrency=1)  # fmt: skip
    assert _passes(server) == 5  # the first trace finished, the second never started
    done = run_analysis(ANALYSIS, config, out=tmp_path / "b")  # resumes: the second only
    assert _passes(server) == 9 and done.result is not None and len(done.result.rows) == 2


def test_both_commands_estimate_and_stop_alike(
    server: _Server, traces: Path, tmp_path: Path
) -> None:
    app = build_app()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"traces": [str(traces)], "endpoint": _url(server)}))
    for extra, code, said in [
        (("--estimate",), 0, "model calls to make: 9"),
        (("--max-calls", "2"), 5, "--max-calls 2 reached"),
    ]:
        friendly = CliRunner().invoke(app, [
            "attribution", str(traces), "--endpoint", _url(server), "--out", str(tmp_path / "f"),
            *extra,
        ])  # fmt: skip
        analyzed = CliRunner().invoke(app, [
            "analyze", "attribution", "--config", str(config), "--concurrency", "1", "--out",
            str(tmp_path / "a"), *extra,
        ])  # fmt: skip
        assert (friendly.exit_code, analyzed.exit_code) == (code, code), friendly.output
        for res in (friendly, analyzed):
            assert said in res.output + res.stderr, extra


def test_a_ray_executor_is_refused_before_any_pass(
    server: _Server, traces: Path, tmp_path: Path
) -> None:
    from groundtrace.analyzer.executor import RayExecutor

    config = Config(traces=(str(traces),), endpoint=_url(server))
    with pytest.raises(ConfigError, match="--executor local"):
        run_analysis(ANALYSIS, config, out=tmp_path / "r", executor=RayExecutor())
    assert server.bodies == []
