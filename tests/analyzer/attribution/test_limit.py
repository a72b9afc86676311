"""``limit``: the first N traces that can be attributed (the demo's hook sets it), the traces
before them that cannot be still named."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.analyzer import DemoInputs
from groundtrace.analyzer.attribution._shape import ANALYSIS, DEMO_TRACES, Config, plan
from groundtrace.analyzer.errors import ConfigError
from tests.analyzer.attribution.test_analysis import _trace


def _traces(tmp_path: Path) -> str:
    traces = [
        _trace("t3", None, ("p1",)),  # no answer: named, not counted
        _trace("t1", "twelve metres", ("p1", "p2", "p3")),
        _trace("t2", "south quay barge", ("p3", "p1")),
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.to_json() + "\n" for t in traces), encoding="utf-8")
    return str(path)


def test_the_limit_takes_the_first_traces_that_can_be_attributed(tmp_path: Path) -> None:
    traces = _traces(tmp_path)
    one = plan(Config(traces=(traces,), limit=1))
    assert [u.trace_id for u in one] == ["t1"] and list(one.not_usable) == ["t3"]
    every = plan(Config(traces=(traces,)))
    assert [u.trace_id for u in every] == ["t1", "t2"]
    assert [u.trace_id for u in plan(Config(traces=(traces,), limit=5))] == ["t1", "t2"]


def test_a_limit_below_one_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="limit must be >= 1, got 0") as caught:
        Config(traces=("x",), limit=0)
    assert caught.value.field == "limit"


def test_the_demo_hook_runs_the_behavioural_tier_on_a_few_traces(tmp_path: Path) -> None:
    assert ANALYSIS.demo is not None
    config = ANALYSIS.demo(DemoInputs(traces=tmp_path / "traces", cases=tmp_path / "c.jsonl",
                                      out=tmp_path / "attribution"))  # fmt: skip
    assert config == Config(traces=(str(tmp_path / "traces"),), replay="recorded", limit=4)
    assert DEMO_TRACES == 4
