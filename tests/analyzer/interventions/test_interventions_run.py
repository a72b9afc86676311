"""Intervention runs end to end through the one driver: function replay of demo traces,
endpoint replay, resume."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer._driver import Progress
from groundtrace.analyzer._results import read
from groundtrace.analyzer.interventions import ANALYSIS, Config, InterventionSummary
from groundtrace.analyzer.interventions._records import ReplayRow
from groundtrace.analyzer.interventions._run import InterventionsResult
from groundtrace.analyzer.llm import CallCache
from groundtrace.collectors import ReadReport, read_traces
from tests.integration.run_folder_app import ORPHAN_TRACE
from tests.support.data import HOTPOT
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    out = tmp_path_factory.mktemp("demo")
    run_demo(DemoConfig(model="lexical", questions=3, out=out, dataset=HOTPOT))
    return out


def _config(demo_dir: Path, out: Path, *, gold: bool = True, **settings: Any) -> Config:
    return Config(
        out=str(out), traces=(str(demo_dir / "traces"),),
        cases=str(demo_dir / "cases.jsonl") if gold else None, **settings,
    )  # fmt: skip


def _run(config: Config, progress: Progress | None = None) -> InterventionsResult:
    done = run_analysis(
        ANALYSIS, config, out=config.out, concurrency=config.concurrency, progress=progress
    )
    assert done.result is not None
    return done.result


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_function_replay_records_linked_counterfactuals_and_resumes(
    demo_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    config = _config(demo_dir, out, pool_dataset=str(HOTPOT), concurrency=2)
    first = _run(config)
    rows = _rows(out)
    assert first.summary.items == 3
    assert len(rows) == first.summary.calls.units_total > 3 * 4
    assert first.summary.calls.run_now == len(rows)
    assert all(r["status"] == "ok" for r in rows)
    for row in rows:
        if row["operator"] == "REMOVE":
            assert row["target_id"] not in row["evidence_ids"]
        if row["operator"] == "DUPLICATE":
            assert row["evidence_ids"][-1] == row["target_id"]
        if row["operator"] == "REPLACE":
            assert row["replacement_id"] in row["evidence_ids"]
            assert row["target_id"] not in row["evidence_ids"]
        if row["operator"] == "ZERO":
            assert row["evidence_ids"] == []
    assert set(first.summary.operators) >= {"REMOVE", "REPLACE", "DUPLICATE", "ZERO"}
    assert first.summary.operators["REMOVE"].axes["correctness"].n == 3
    # the files are the typed records: they decode back to what the run returned
    assert read(out / "summary.json", InterventionSummary) == first.summary
    lines = (out / "results.jsonl").read_bytes().splitlines()
    assert [msgspec.json.decode(line, type=ReplayRow) for line in lines] == first.rows

    cf = list(read_traces([out / "counterfactual_traces"], report=ReadReport()))
    by_id = {t.trace_id: t for t in cf}
    for row in rows:
        trace = by_id[row["counterfactual"]["trace_id"]]
        assert trace.replay is not None
        assert trace.replay.replay_of == row["trace_id"]
        assert trace.replay.operator == row["operator"]
        assert trace.answer == row["counterfactual"]["answer"]

    again = _run(config)
    assert again.summary.calls.run_now == 0
    assert again.summary.calls.from_journal == len(rows)
    assert again.summary.operators == first.summary.operators
    assert (out / "summary.md").read_text().count("| REMOVE |") >= 3
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html


def test_spans_a_stopped_run_s_worker_writes_during_the_run_are_dropped_at_its_end(
    demo_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a worker of an earlier, killed run finishing its unit after this run opened the folder
    out = tmp_path / "run"
    (out / "counterfactual_traces").mkdir(parents=True)
    monkeypatch.setenv("GT_TEST_ORPHAN", str(out / "counterfactual_traces"))
    config = _config(demo_dir, out, replay="tests.integration.run_folder_app:answer",
                     concurrency=2)  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="groundtrace"):
        _run(config)
    assert (out / "counterfactual_traces" / "orphan.jsonl").exists()  # it was written
    named = sorted(row["counterfactual"]["trace_id"] for row in _rows(out))
    found = sorted(t.trace_id for t in read_traces([out / "counterfactual_traces"],
                                                   report=ReadReport()))  # fmt: skip
    assert ORPHAN_TRACE not in found and found == named and len(named) > 3 * 4
    assert "dropped 1 counterfactual traces that no unit of this run names" in caplog.text


def test_without_cases_gold_axes_are_skipped_with_reason(demo_dir: Path, tmp_path: Path) -> None:
    result = _run(_config(demo_dir, tmp_path / "run", gold=False, operators=("REMOVE", "ZERO")))
    skipped = result.summary.skipped_axes
    assert "correctness" in skipped and "grounding" in skipped
    remove = result.summary.operators["REMOVE"]
    assert "correctness" not in remove.axes and "grounding" not in remove.axes
    assert remove.axes["divergence"].n == 3
    assert remove.confidence_shift.n == 3


def _answering(req: ServerRequest) -> Reply:
    """Cite the first chunk shown; answer with its title; no evidence -> low confidence."""
    text = last_user_text(req)
    found = re.search(r"\[([^\]\n]+)\] ([^\n]+)", text.split("<<<EVIDENCE>>>", 1)[-1])
    if found is None:
        body = {"answer": "unknown", "confidence": 0.1, "used_chunks": []}
    else:
        body = {"answer": found.group(2), "confidence": 0.8, "used_chunks": [found.group(1)]}
    return Reply(content=json.dumps(body))


def _posts(server: OpenAICompatServer) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in server.requests if r.method == "POST"]


def test_endpoint_replay_kill_and_resume_repeats_no_call(demo_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with OpenAICompatServer(handler=_answering) as server:
        config = _config(
            demo_dir, out, pool_dataset=str(HOTPOT), endpoint=server.base_url, model="m",
            concurrency=1,
        )  # fmt: skip
        calls = {"n": 0}

        def stop_after_three(phase: str, done: int, total: int | None) -> None:
            if phase == "replay units" and done > 0:
                calls["n"] += 1
            if calls["n"] >= 3:
                raise KeyboardInterrupt("killed")

        with pytest.raises(KeyboardInterrupt):
            _run(config, progress=stop_after_three)
        first = _posts(server)
        cache = CallCache(out / "llm_cache.sqlite")
        completed_calls = len(cache)
        cache.close()
        assert completed_calls >= 1
        result = _run(config)
        second = _posts(server)[len(first) :]
    # only a call still in flight when the run was killed (concurrency 1: at most one) may be
    # sent again; every call that completed before the kill is served from cache/journal
    repeated = set(first) & set(second)
    assert len(repeated) == len(set(first)) - completed_calls <= 1
    assert len(second) == len(set(second))
    calls_summary = result.summary.calls
    assert calls_summary.from_journal == 3
    assert calls_summary.model_calls_made == len(second)
    assert all(r["status"] == "ok" for r in _rows(out))
    sent = json.loads(second[0])
    assert sent["temperature"] == 0 and sent["seed"] == 0


def test_endpoint_replay_retries_429_and_records_500_failures(
    demo_dir: Path, tmp_path: Path
) -> None:
    seen: set[str] = set()

    def flaky(req: ServerRequest) -> Reply:  # Retry-After 0: the client retries at once
        text = last_user_text(req)
        if "(no evidence)" in text:
            return Reply(status=500, error_message="backend down", retry_after=0)
        key = json.dumps(req.body, sort_keys=True)
        if key not in seen:
            seen.add(key)
            return Reply(status=429, error_message="slow down", retry_after=0)
        return _answering(req)

    with OpenAICompatServer(handler=flaky) as server:
        config = _config(
            demo_dir, tmp_path / "run", endpoint=server.base_url, model="m",
            operators=("REMOVE", "DUPLICATE", "ZERO"),
        )  # fmt: skip
        result = _run(config)
    s = result.summary
    assert s.calls.retries is not None and s.calls.retries >= 6
    assert s.failed_units == {"ZERO": 3}
    assert s.failure_kinds == {"http_error": 3}
    assert "ZERO" not in s.operators
    assert s.operators["REMOVE"].axes["divergence"].n == 3
    zero_rows = [r for r in result.rows if r.operator == "ZERO"]
    assert all(
        r.status == "failed" and r.error is not None and "500" in (r.error.message or "")
        for r in zero_rows
    )


def test_zero_evidence_never_sends_an_empty_enum() -> None:
    from groundtrace.analyzer.replay._endpoint import _swap_ids

    fmt = {
        "type": "json_object",
        "schema": {
            "properties": {
                "used_chunks": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["a", "b"]},
                    "maxItems": 3,
                },
                "pick": {"enum": ["a", "b"]},
            }
        },
    }
    swapped = _swap_ids(fmt, ["a", "b"], [])
    props = swapped["schema"]["properties"]
    assert props["used_chunks"] == {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    assert "enum" not in props["pick"]
    assert _swap_ids(fmt, ["a", "b"], ["c"])["schema"]["properties"]["pick"] == {"enum": ["c"]}
