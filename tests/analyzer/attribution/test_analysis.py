"""The attribution analysis end to end through the driver (``run_analysis``): traces in, one
attribution per answer out, scored by the endpoint tier against a loopback server whose toy
model makes the answer likely only when its evidence is in the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.attribution._shape import ANALYSIS, Config
from groundtrace.analyzer.errors import ConfigError
from groundtrace.collectors import Trace
from groundtrace.collectors.model import Evidence, LLMCall, Message, Request
from tests.analyzer.attribution.test_endpoint_scorer import _Server

pytestmark = pytest.mark.timeout(120)

PAGES = {
    "p1": "Pilots board at the Eastern buoy.",
    "p2": "Berth seven has a charted depth of twelve metres.",
    "p3": "Oily waste goes to the south quay barge.",
}


def _trace(trace_id: str, answer: str | None, shown: tuple[str, ...]) -> Trace:
    prompt = "Evidence:\n" + "\n".join(f"[{i}] {PAGES[i]}" for i in shown) + "\nQuestion?"
    return Trace(
        request=Request(trace_id=trace_id, case_id=f"case-{trace_id}"),
        evidence=tuple(
            Evidence(i, "s1", "RETRIEVE", rank=n, content=PAGES[i]) for n, i in enumerate(shown, 1)
        ),
        answer=answer,
        llm_calls=(
            LLMCall(
                "s2", messages=(Message("user", prompt),), output_text=f'{{"answer": "{answer}"}}'
            ),
        ),
    )


def test_each_answer_is_attributed_to_the_evidence_it_rests_on(
    server: _Server, tmp_path: Path
) -> None:
    traces = [
        _trace("t1", "twelve metres", ("p1", "p2", "p3")),
        _trace("t2", "south quay barge", ("p3", "p1")),
        _trace("t3", None, ("p1",)),  # no answer: named, not attributed
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.to_json() + "\n" for t in traces), encoding="utf-8")
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    config = Config(traces=(str(path),), endpoint=url, endpoint_model="toy")
    done = run_analysis(ANALYSIS, config, out=tmp_path / "out")
    assert done.result is not None
    rows = {r.trace_id: r for r in done.result.rows}
    assert set(rows) == {"t1", "t2"}
    t1, t2 = rows["t1"], rows["t2"]
    assert [s.id for s in t1.sources] == ["p1", "p2", "p3"]
    assert max(t1.sources, key=lambda s: s.score).id == "p2"
    assert max(t2.sources, key=lambda s: s.score).id == "p3"
    assert t1.tier == "endpoint" and t1.method == "leave-one-out" and t1.passes == 4
    assert t1.context_gap == pytest.approx(2 * 3.5)  # "twelve", "metres": -0.5 vs -4 each
    assert "t3" in done.result.not_usable and "no answer" in done.result.not_usable["t3"]
    report = json.loads((tmp_path / "out" / "attribution.json").read_text())
    assert len(report["rows"]) == 2
    text = (tmp_path / "out" / "attribution.md").read_text()
    assert "Top evidence: `p2`" in text and "not attributed: t3" in text
    assert "| case-t1 | `p2` |" in text  # the summary table
    assert "<h1>Attribution</h1>" in (tmp_path / "out" / "attribution.html").read_text()
    assert done.reading.startswith("2 answer(s) attributed (endpoint tier, vllm form); 2 depend")
    assert all(r.endpoint_form == "vllm" for r in rows.values())  # probed, named on each row
    # a re-run resumes from the journal: no request is sent again
    sent = len(server.bodies)
    again = run_analysis(ANALYSIS, config, out=tmp_path / "out")
    assert len(server.bodies) == sent
    assert again.result is not None and again.result.rows == done.result.rows


def test_shapley_and_contextcite_run_through_the_same_shape(
    server: _Server, tmp_path: Path
) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(_trace("t1", "twelve metres", ("p1", "p2", "p3")).to_json() + "\n")
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    for method, passes in (("shapley", 8), ("contextcite", None)):
        config = Config(traces=(str(path),), endpoint=url, method=method)  # type: ignore[arg-type]
        result = run_analysis(ANALYSIS, config, out=tmp_path / method).result
        assert result is not None
        (row,) = result.rows
        assert max(row.sources, key=lambda s: s.score).id == "p2", method
        assert passes is None or row.passes == passes


def test_a_config_names_exactly_one_scorer() -> None:
    with pytest.raises(ConfigError, match="at most one of model_path and endpoint"):
        Config(traces=("x",), model_path="m.gguf", endpoint="http://127.0.0.1:1/v1")
