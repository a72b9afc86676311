"""Golden files: fixture spans of each convention -> τ JSON, and τ JSON round trips.

Fixtures in tests/fixtures/collectors/: ``groundtrace`` (hand-built RAG + agent traces),
``openinference`` and ``openllmetry_genai`` (captured from the real instrumentations against
the local OpenAI-compatible server), ``openllmetry_legacy`` (the older ``gen_ai.prompt.{i}``
layout) and ``genai_events`` (GenAI spans with per-message events, retrieval, a failing
tool). Regenerate goldens after a deliberate model change with
``GROUNDTRACE_UPDATE_GOLDEN=1 pytest tests/collectors/test_model_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from groundtrace.collectors import MODEL_VERSION, InputError, Trace, read_traces

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collectors"
NAMES = sorted(p.name.removesuffix(".spans.jsonl") for p in FIXTURES.glob("*.spans.jsonl"))


def _golden(name: str) -> Path:
    return FIXTURES / f"{name}.golden.json"


def test_every_convention_has_a_fixture() -> None:
    assert NAMES == [
        "genai_events",
        "groundtrace",
        "openinference",
        "openllmetry_genai",
        "openllmetry_legacy",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_spans_to_tau_equals_golden(name: str) -> None:
    traces = [t.to_dict() for t in read_traces([FIXTURES / f"{name}.spans.jsonl"])]
    # locations name the fixture file relative to the repo, independent of the checkout
    text = json.dumps(traces, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    text = text.replace(str(FIXTURES) + os.sep, "")
    if os.environ.get("GROUNDTRACE_UPDATE_GOLDEN") == "1":
        _golden(name).write_text(text, encoding="utf-8")
    assert text == _golden(name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_golden_round_trips_exactly(name: str) -> None:
    for obj in json.loads(_golden(name).read_text(encoding="utf-8")):
        compact = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        trace = Trace.from_json(compact)
        assert trace.to_json() == compact
        assert Trace.from_dict(obj) == trace


def test_hand_checked_values_in_goldens() -> None:
    (rag, agent) = [Trace.from_dict(o) for o in json.loads(_golden("groundtrace").read_text())]
    assert rag.answer == "Steven Spielberg" and rag.confidence == 0.9
    assert [e.id for e in rag.evidence] == ["d1", "d2"] and rag.selected_ids == ("d1",)
    assert [t.status for t in agent.tool_calls] == ["ok", "error"]
    (legacy,) = [Trace.from_dict(o) for o in json.loads(_golden("openllmetry_legacy").read_text())]
    assert legacy.request.query == "Who directed Jaws?" and legacy.answer == "Steven Spielberg"
    assert legacy.tool_calls[0].arguments == {"title": "Jaws"}
    assert legacy.llm_calls[0].usage.total_tokens == 15
    (genai,) = [Trace.from_dict(o) for o in json.loads(_golden("genai_events").read_text())]
    assert [m.role for m in genai.llm_calls[0].messages] == ["system", "user"]
    assert genai.llm_calls[0].output_text == "Steven Spielberg"
    assert [(e.id, e.score) for e in genai.evidence] == [("w1", 0.9), ("w2", 0.4)]
    assert genai.tool_calls[0].status == "error"
    assert genai.tool_calls[0].error_type == "TimeoutError"


def test_from_json_rejects_other_versions_and_unknown_fields() -> None:
    obj = json.loads(_golden("groundtrace").read_text())[0]
    with pytest.raises(InputError, match="model version"):
        Trace.from_json(json.dumps({**obj, "model_version": "0.1"}))
    with pytest.raises(InputError, match="unknown field"):
        Trace.from_json(json.dumps({**obj, "surprise": 1}))
    bad = json.loads(json.dumps(obj))
    bad["evidence"][0]["score"] = "high"
    with pytest.raises(InputError) as info:
        Trace.from_dict(bad)
    assert info.value.field == "$.evidence[0].score"
    assert obj["model_version"] == MODEL_VERSION


@pytest.mark.parametrize("name", NAMES)
def test_a_model_1_0_trace_still_loads_and_its_fields_keep_their_layout(name: str) -> None:
    """1.1 only appended ``evaluations``: a 1.0 trace loads, and its fields encode exactly as
    they did (the 1.0 text plus the new field at the end)."""
    for obj in json.loads(_golden(name).read_text(encoding="utf-8")):
        old = {k: v for k, v in obj.items() if k != "evaluations"} | {"model_version": "1.0"}
        compact = json.dumps(old, ensure_ascii=False, separators=(",", ":"))
        trace = Trace.from_json(compact)
        assert trace.evaluations == () and Trace.from_dict(old) == trace
        assert trace.to_json() == compact[:-1] + ',"evaluations":[]}'
