"""Interventions with the real local default model: demo traces, function and endpoint replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.interventions import ANALYSIS, Config
from groundtrace.analyzer.interventions._run import InterventionsResult
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(3600)]

OPERATORS = ("REMOVE", "REPLACE", "DUPLICATE", "ZERO", "JOINT_REMOVE")


def _run(config: Config) -> InterventionsResult:
    done = run_analysis(ANALYSIS, config, out=config.out, concurrency=config.concurrency)
    assert done.result is not None
    return done.result


def test_embedded_model_interventions_complete(tmp_path: Path) -> None:
    hotpot = HOTPOT
    from groundtrace.analyzer.backends import LlamaServer
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    demo = tmp_path / "demo"
    result = run_demo(DemoConfig(questions=1, out=demo, dataset=hotpot))

    def config(out: str, **replay: Any) -> Config:
        return Config(
            out=str(tmp_path / out), traces=(str(demo / "traces"),),
            cases=str(demo / "cases.jsonl"), pool_dataset=str(hotpot), operators=OPERATORS,
            concurrency=1, **replay,
        )  # fmt: skip

    with LlamaServer() as server:
        endpoint = _run(config("endpoint", endpoint=server.base_url, model=server.model))
        function = _run(config("function", replay_kwargs={"base_url": server.base_url}))
    assert result.report.questions == 1
    for run in (endpoint, function):
        s = run.summary
        assert s.items == 1
        ok = sum(1 for r in run.rows if r.status == "ok")
        assert ok + sum(s.failed_units.values()) == s.calls.units_total
        assert "REMOVE" in s.operators, (run.out_dir, s.failed_units, s.calls)
        assert s.operators["REMOVE"].axes["divergence"].n >= 1
