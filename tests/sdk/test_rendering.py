"""Evidence rendering, prompt building, block replacement and answer parsing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import groundtrace.sdk as gt
from groundtrace.sdk import rendering
from groundtrace.sdk import semconv as sc

from .conftest import Traces

EVIDENCE = [
    {"id": "d1", "title": "Jaws (film)", "content": "Jaws is a 1975 film.\r\nBy Spielberg.  "},
    {"id": "d2", "title": "Steven Spielberg", "content": "An American filmmaker."},
]


def test_render_format_is_fixed() -> None:
    assert gt.render_evidence(EVIDENCE) == (
        "<<<EVIDENCE>>>\n"
        "[d1] Jaws (film)\nJaws is a 1975 film.\nBy Spielberg.\n\n"
        "[d2] Steven Spielberg\nAn American filmmaker.\n"
        "<<<END EVIDENCE>>>"
    )
    assert gt.render_evidence([]) == "<<<EVIDENCE>>>\n(no evidence)\n<<<END EVIDENCE>>>"
    sid = gt.render_evidence(["plain text"]).splitlines()[1]
    assert sid.startswith("[") and sid.endswith("]") and len(sid) == 18


def test_round_trip_render_prompt_replace_parse(traces: Traces) -> None:
    @gt.answer
    def respond(question: str, evidence: list[dict[str, Any]]) -> gt.ParsedAnswer:
        prompt = gt.build_prompt(question, evidence)
        assert prompt.evidence_block in prompt.messages[1]["content"]
        reply = (
            "Sure!\n```json\n"
            + json.dumps({"answer": "Spielberg", "confidence": 0.9, "used_chunks": ["d1"]})
            + "\n```\nHope that helps."
        )
        return gt.parse_answer(reply)

    parsed = respond("Who directed Jaws?", EVIDENCE)
    assert parsed == gt.ParsedAnswer("Spielberg", 0.9, ["d1"], parsed.raw, None)
    attrs = traces.one("ANSWER").attributes
    old_block = str(attrs[sc.GT_PROMPT_EVIDENCE_BLOCK])
    assert tuple(attrs[sc.GT_PROMPT_EVIDENCE_IDS]) == ("d1", "d2")
    assert attrs[sc.GT_PROMPT_FORMAT] == rendering.EVIDENCE_FORMAT
    assert attrs[sc.GT_ANSWER_TEXT] == "Spielberg"
    assert tuple(attrs[sc.GT_ANSWER_CITED_IDS]) == ("d1",)

    # the analyzer's side: find the recorded block in the captured messages, swap it
    captured = gt.build_prompt("Who directed Jaws?", EVIDENCE, record=False).messages
    new_block = gt.render_evidence(EVIDENCE[1:])  # REMOVE d1
    edited = gt.replace_evidence_block(captured, old_block, new_block)
    assert captured[1]["content"].count("[d1]") == 1  # input untouched
    assert "[d1]" not in edited[1]["content"] and new_block in edited[1]["content"]
    assert edited[0] == captured[0]
    assert edited[1]["content"].endswith("Question: Who directed Jaws?")


def test_replace_in_content_parts_and_strings() -> None:
    block = gt.render_evidence(EVIDENCE)
    messages = [{"role": "user", "content": [{"type": "text", "text": f"x {block} y"}]}]
    out = gt.replace_evidence_block(messages, block, "NEW")
    assert out[0]["content"][0]["text"] == "x NEW y"
    assert gt.replace_evidence_block(f"a{block}b", block, "N") == "aNb"


@pytest.mark.parametrize("messages", [[{"role": "user", "content": "nothing here"}], "nope"])
def test_replace_requires_exactly_one_occurrence(messages: Any) -> None:
    block = gt.render_evidence(EVIDENCE)
    with pytest.raises(ValueError, match="found 0 times"):
        gt.replace_evidence_block(messages, block, "N")
    with pytest.raises(ValueError, match="found 2 times"):
        gt.replace_evidence_block(f"{block}{block}", block, "N")


@pytest.mark.parametrize(
    ("reply", "answer", "confidence", "used", "error"),
    [
        (
            '{"answer": "A", "confidence": 0.5, "used_chunks": ["d1", 2]}',
            "A",
            0.5,
            ["d1", "2"],
            None,
        ),
        (
            '```\n{"answer":"B","confidence":"0.25","used_chunks":"d3"}\n```',
            "B",
            0.25,
            ["d3"],
            None,
        ),
        ('Answer below: {"text": "C", "score": 1} thanks', "C", 1.0, [], None),
        ('{"answer": "D", "confidence": 85}', "D", None, [], "invalid confidence 85"),
        ('{"answer": "E"}', "E", None, [], "missing confidence"),
        ("just words", "just words", None, [], "no JSON object in the reply"),
        ("```json\n{broken\n```", "{broken", None, [], "no JSON object in the reply"),
        ('{"confidence": 0.1}', "", 0.1, [], "missing answer"),
    ],
)
def test_parse_answer_cases(
    reply: str, answer: str, confidence: float | None, used: list[str], error: str | None
) -> None:
    parsed = gt.parse_answer(reply)
    assert (parsed.answer, parsed.confidence, parsed.used_chunks, parsed.error) == (
        answer,
        confidence,
        used,
        error,
    )
    assert parsed.raw == reply


@given(st.one_of(st.text(), st.binary(), st.none(), st.integers(), st.lists(st.text())))
def test_parse_answer_never_raises(value: Any) -> None:
    parsed = gt.parse_answer(value)
    assert isinstance(parsed, gt.ParsedAnswer)
    assert parsed.confidence is None or 0.0 <= parsed.confidence <= 1.0


def test_block_not_recorded_when_evidence_capture_off(traces: Traces) -> None:
    traces.settings(capture=frozenset())

    @gt.answer
    def respond(question: str) -> str:
        gt.build_prompt(question, EVIDENCE)
        return "x"

    respond("q")
    attrs = traces.one("ANSWER").attributes
    assert sc.GT_PROMPT_EVIDENCE_BLOCK not in attrs
    assert tuple(attrs[sc.GT_PROMPT_EVIDENCE_IDS]) == ("d1", "d2")
