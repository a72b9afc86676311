"""The demo path on the real local default embedded model (llama-cpp-python)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.collectors.readers import read_traces

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(1800)]

pytest.importorskip("llama_cpp")


def test_demo_on_the_default_model_records_real_llm_calls(tmp_path: Path) -> None:
    from groundtrace.analyzer.backends import DEFAULT_MODEL, MODELS
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    result = run_demo(DemoConfig(questions=2, out=tmp_path / "demo"))

    assert result.config.model == DEFAULT_MODEL
    assert result.backend.kind == "embedded"
    assert result.backend.base_url.startswith("http://127.0.0.1:")
    summary = result.summary
    assert summary.traces == 2 and summary.answered == 2 and not summary.read_errors
    traces = list(read_traces([result.traces_dir]))
    for trace in traces:
        (call,) = trace.llm_calls
        assert call.model == MODELS[DEFAULT_MODEL].alias
        assert call.base_url is not None and "127.0.0.1" in call.base_url
        assert call.params.get("temperature") == 0
        # the model's reply is schema-constrained JSON
        reply = json.loads(call.output_text or "")
        assert set(reply) >= {"answer", "confidence", "used_chunks"}
        assert trace.answer == reply["answer"]
        assert set(reply["used_chunks"]) <= {e.id for e in trace.evidence}


def test_default_model_is_deterministic_at_temperature_zero(tmp_path: Path) -> None:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    first = run_demo(DemoConfig(questions=1, out=tmp_path / "a"))
    second = run_demo(DemoConfig(questions=1, out=tmp_path / "b"))
    answers = lambda r: [(row["case_id"], row["answer"]) for row in r.summary.per_case]  # noqa: E731
    assert sorted(answers(first)) == sorted(answers(second))


def test_default_demo_phases_on_the_model_with_its_prompt_cache(tmp_path: Path) -> None:
    """Gate and CUE-R replays through the cached server give what a fresh server answers."""
    from groundtrace.analyzer.backends import LlamaServer
    from groundtrace.analyzer.demo import DemoConfig, run_demo
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import load_cases

    out = tmp_path / "demo"
    result = run_demo(DemoConfig(questions=2, out=out, interventions=2, gate_top_k=2, judge=True))

    report = result.report
    assert list(report.phase_seconds) == [
        "model server", "app", "candidate app", "gate", "interventions", "judge",
    ]  # fmt: skip
    summary = result.runs["interventions"].result.summary
    assert "gate" in report.analyses
    assert summary.calls.units_total == 6 and not sum(summary.failed_units.values())
    assert list(summary.operators) == ["REMOVE", "REPLACE", "DUPLICATE"]
    assert all(op.n_items == 2 for op in summary.operators.values())
    # the gate's top-2 prompts restarted from the app's saved top-5 prompts: same answers as
    # a server without a prompt cache evaluating them from scratch
    recorded = {t.request.case_id: t.answer for t in read_traces([out / "candidate" / "traces"])}
    with LlamaServer() as fresh:
        for case in load_cases(limit=2):
            evidence = app.prompt_evidence(app.retrieve_chunks(case.question, case.passages, 2))
            reply = app.answer(
                case.question or "", evidence, model=fresh.model, base_url=fresh.base_url
            )
            assert reply["answer"] == recorded[case.case_id], case.case_id
