"""The behavioural tier: the app replayed without each evidence item, scored by what that does
to its answer (answer changed, then CUE-R's divergence D), through the one driver.

The app here is a deterministic reader: it answers the berth depth stated by the first
evidence item that states one and cites every item that does; its traces are built as the
SDK records them (evidence, the model call's prompt, the answer, the replayable entry point).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer.attribution import ANALYSIS, AttributionResult, Config
from groundtrace.analyzer.attribution._behavioural import behavioural_score
from groundtrace.analyzer.attribution._shape import Unit
from groundtrace.analyzer.attribution._traces import trace_context
from groundtrace.analyzer.errors import BudgetReachedError, ConfigError
from groundtrace.analyzer.llm import Budget
from groundtrace.analyzer.replay import UnitResult
from groundtrace.collectors import Trace
from groundtrace.collectors.model import (
    Evidence,
    LLMCall,
    Message,
    ReplayEntrypoint,
    Request,
)

pytestmark = pytest.mark.timeout(180)

HERE = "tests.analyzer.attribution.test_behavioural"

NOTES: dict[str, str] = {
    "n1": "The harbour opened in 1901 on the east bank.",
    "n2": "Berth seven has a depth of twelve metres at low water.",
    "n3": "The harbour master confirms berth seven has a depth of twelve metres.",
    "n4": "Pilots board at the Eastern buoy.",
    "n5": "A survey says berth seven has a depth of forty metres.",
}
#: (case id, evidence shown in order).
ASKED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("one-source", ("n1", "n2", "n4")),  # the answer rests on n2 alone
    ("two-sources", ("n1", "n2", "n3")),  # n2 and n3 say the same: no removal changes it
    ("injected", ("n5", "n2", "n4")),  # n5 asserts another depth first and is followed
)
_DEPTH = re.compile(r"depth of (\w+ metres)")
QUESTION = "How deep is berth seven?"
#: The units are given to the driver (built from the traces below), not read from files.
GIVEN = ("given",)


#: The questions the app was asked (each call of :func:`reply`).
CALLS: list[str] = []


def reply(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """The depth the first item stating one gives, citing every item stating one."""
    CALLS.append(question)
    stating = [e for e in evidence if _DEPTH.search(str(e["content"]))]
    if not stating:
        return {"answer": "unknown", "confidence": 0.1, "used_chunks": []}
    found = _DEPTH.search(str(stating[0]["content"]))
    assert found is not None
    return {
        "answer": found.group(1), "confidence": 0.9, "used_chunks": [e["id"] for e in stating]
    }  # fmt: skip


def reply_down(question: str, evidence: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A replay entry point whose every call fails."""
    raise ConnectionError("the harbour's model is down")


def _trace(case_id: str, shown: tuple[str, ...]) -> Trace:
    """The trace the app records: its evidence, the model call's prompt, the answer and the
    replayable entry point."""
    evidence = [{"id": i, "title": i, "content": NOTES[i]} for i in shown]
    answer = reply(QUESTION, evidence)["answer"]
    prompt = "Evidence:\n" + "".join(f"[{i}] {NOTES[i]}\n" for i in shown) + QUESTION
    return Trace(
        request=Request(trace_id=f"t-{case_id}", query=QUESTION, case_id=case_id),
        evidence=tuple(
            Evidence(i, "s1", "RETRIEVE", title=i, rank=n, content=NOTES[i])
            for n, i in enumerate(shown, 1)
        ),
        answer=answer,
        llm_calls=(LLMCall("s2", messages=(Message("user", prompt),), output_text=answer),),
        entrypoint=ReplayEntrypoint("s2", f"{HERE}:reply"),
    )


def _units() -> list[Unit]:
    traces = [_trace(case_id, shown) for case_id, shown in ASKED]  # in ASKED order
    return [Unit(t.trace_id, t.request.case_id, trace_context(t), t) for t in traces]


def _run(
    config: Config, out: Path, units: list[Unit] | None = None
) -> tuple[AttributionResult, int, str | None]:
    units = _units() if units is None else units
    done = run_analysis(ANALYSIS, config, out=out, concurrency=1, units=units)
    assert isinstance(done.result, AttributionResult)
    return done.result, done.exit_code, done.reason


def test_each_item_is_scored_by_what_removing_it_does_to_the_replayed_answer(
    tmp_path: Path,
) -> None:
    done = run_analysis(
        ANALYSIS, Config(traces=GIVEN, replay="recorded"), out=tmp_path / "run", concurrency=1,
        units=_units(),
    )  # fmt: skip
    assert isinstance(done.result, AttributionResult) and done.exit_code == 0
    result = done.result
    assert "depend on their context" not in done.reading  # no log-probability, no gap
    assert (
        "3 answer(s) attributed (behavioural tier). Replayed without each source (behavioural "
        "tier), 2 of 3 answer(s) change when one source is removed, 2 of them for exactly one "
        "source." in done.reading
    )
    rows = {r.case_id: r for r in result.rows}
    assert set(rows) == {c for c, _ in ASKED} and not result.not_usable
    for row in rows.values():
        assert (row.tier, row.method, row.passes) == ("behavioural", "leave-one-out", 4)
        assert row.full is None and row.context_gap is None and row.recorded_answer is None
        assert len(row.replays) == 4 and all(row.replays)
    one = {s.id: s for s in rows["one-source"].sources}
    # without n2 the answer is "unknown": changed (1) + D (0.5 * 1 + 0.3 + 0.2 * 0.8)
    assert one["n2"].score == pytest.approx(1.96)
    assert one["n2"].answer_without == "unknown"
    assert one["n1"].score == one["n4"].score == 0.0
    assert one["n1"].answer_without == "twelve metres"
    two = {s.id: s.score for s in rows["two-sources"].sources}
    # no removal changes the answer; removing a cited item moves the cited set (D = 0.5 * 1/2)
    assert two == {"n1": 0.0, "n2": pytest.approx(0.25), "n3": pytest.approx(0.25)}
    injected = rows["injected"]
    assert injected.answer == "forty metres"
    ranked = sorted(injected.sources, key=lambda s: -s.score)
    assert [s.id for s in ranked] == ["n5", "n2", "n4"]
    assert ranked[0].answer_without == "twelve metres"
    report = (tmp_path / "run" / "attribution.md").read_text()
    assert "behavioural" in report and "n5" in report


def test_a_rerun_replays_nothing_and_keeps_one_counterfactual_trace_per_replay(
    tmp_path: Path,
) -> None:
    config = Config(traces=GIVEN, replay="recorded")
    units = _units()
    first, _, _ = _run(config, tmp_path / "run", units)
    calls = len(CALLS)
    again, _, _ = _run(config, tmp_path / "run", units)
    assert again == first and len(CALLS) == calls  # nothing replayed again
    folder = tmp_path / "run" / "attribution_counterfactual_traces"
    spans = [json.loads(line) for f in folder.glob("*.jsonl") for line in f.open()]
    ids = {
        s["traceId"]
        for record in spans
        for r in record["resourceSpans"]
        for sc in r["scopeSpans"]
        for s in sc["spans"]
    }
    assert ids == {t for row in first.rows for t in row.replays}
    assert len(ids) == 12


def test_a_failed_replay_leaves_the_trace_out_with_the_reason_and_exits_6(
    tmp_path: Path,
) -> None:
    config = Config(traces=GIVEN, replay=f"{HERE}:reply_down")
    result, code, reason = _run(config, tmp_path / "run")
    assert result.rows == () and code == 6
    assert set(result.not_usable) and all(
        "a replay failed" in why and "the harbour's model is down" in why
        for why in result.not_usable.values()
    )
    assert reason is not None and "a replay failed" in reason


def test_the_score_orders_changed_answers_first_then_by_divergence() -> None:
    full = UnitResult("k", "ok", answer="Twelve metres.", confidence=0.9, cited_ids=("a", "b"))
    same_answer_cites_moved = msgspec.structs.replace(
        full, answer="twelve metres", cited_ids=("a",)
    )
    changed = msgspec.structs.replace(full, answer="forty metres")
    no_confidence = msgspec.structs.replace(changed, confidence=None)
    # normalised answers compare equal: only the cited set moved (0.5 * 1/2)
    assert behavioural_score(full, same_answer_cites_moved) == pytest.approx(0.25)
    assert behavioural_score(full, changed) == pytest.approx(1.3)
    # a missing confidence drops its term, the two others weighted 5/8 and 3/8
    assert behavioural_score(full, no_confidence) == pytest.approx(1.375)
    # the most an unchanged answer can score is below the least a changed one scores
    most_unchanged = msgspec.structs.replace(full, cited_ids=("z",), confidence=0.0)
    least_changed = msgspec.structs.replace(full, answer="forty metres")
    assert behavioural_score(full, most_unchanged) < 1.0 < behavioural_score(full, least_changed)


def test_the_behavioural_tier_takes_no_model_and_only_leave_one_out() -> None:
    with pytest.raises(ConfigError, match="no model_path or endpoint"):
        Config(traces=("t",), replay="recorded", endpoint="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="leave-one-out only"):
        Config(traces=("t",), replay="recorded", method="shapley")


def test_each_replay_counts_as_one_call_and_a_budget_stops_the_run(tmp_path: Path) -> None:
    config = Config(traces=GIVEN, replay="recorded")
    done = run_analysis(ANALYSIS, config, out=tmp_path / "all", concurrency=1, units=_units())
    assert {m: u.calls for m, u in done.calls.items()} == {f"replay {HERE}:reply": 12}
    with pytest.raises(BudgetReachedError):
        run_analysis(
            ANALYSIS, config, out=tmp_path / "capped", concurrency=1, units=_units(),
            budget=Budget(max_calls=4),
        )  # fmt: skip
    resumed = run_analysis(ANALYSIS, config, out=tmp_path / "capped", concurrency=1,
                           units=_units())  # fmt: skip
    assert isinstance(resumed.result, AttributionResult) and len(resumed.result.rows) == 3
    # the trace the capped run finished is not replayed again
    assert sum(u.calls for u in resumed.calls.values()) == 8


def test_a_unit_without_its_trace_is_left_out_with_the_reason(tmp_path: Path) -> None:
    first, *others = _units()
    units = [Unit(first.trace_id, first.case_id, first.context), *others]
    config = Config(traces=GIVEN, replay="recorded")
    done = run_analysis(ANALYSIS, config, out=tmp_path, concurrency=1, units=units)
    assert isinstance(done.result, AttributionResult) and len(done.result.rows) == 2
    assert done.result.not_usable == {first.trace_id: "no trace to replay (a unit made "
                                      "without its trace)"}  # fmt: skip
