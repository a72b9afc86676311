"""Interventions with the real local default model: demo traces, function and endpoint replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.analyzer.interventions import PlanSettings, RunConfig, run_interventions
from tests.support.data import HOTPOT

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(3600)]

OPERATORS = ("REMOVE", "REPLACE", "DUPLICATE", "ZERO", "JOINT_REMOVE")


def test_embedded_model_interventions_complete(tmp_path: Path) -> None:
    hotpot = HOTPOT
    from groundtrace.analyzer.backends import LlamaServer
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    demo = tmp_path / "demo"
    result = run_demo(DemoConfig(questions=1, out=demo, dataset=hotpot))
    plan = PlanSettings(operators=OPERATORS)
    with LlamaServer() as server:
        endpoint = run_interventions(
            [demo / "traces"],
            RunConfig(
                out_dir=tmp_path / "endpoint",
                replay=None,
                endpoint=server.base_url,
                model=server.model,
                plan=plan,
                concurrency=1,
            ),
            cases_path=demo / "cases.jsonl",
            pool_dataset=hotpot,
        )
        function = run_interventions(
            [demo / "traces"],
            RunConfig(
                out_dir=tmp_path / "function",
                plan=plan,
                concurrency=1,
                kwarg_overrides={"base_url": server.base_url},
            ),
            cases_path=demo / "cases.jsonl",
            pool_dataset=hotpot,
        )
    assert result.report.questions == 1
    for run in (endpoint, function):
        s = run.summary
        assert s.items == 1
        ok = sum(1 for r in run.rows if r.status == "ok")
        assert ok + sum(s.failed_units.values()) == s.calls.units_total
        assert "REMOVE" in s.operators, (run.out_dir, s.failed_units, s.calls)
        assert s.operators["REMOVE"].axes["divergence"].n >= 1
