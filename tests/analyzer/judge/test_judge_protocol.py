"""Protocol-error semantics of the judge reply (SPEC §4.4): one test per kind."""

from __future__ import annotations

import json

import pytest

from groundtrace.analyzer.judge import Metric, ProtocolErrorKind
from groundtrace.analyzer.judge._protocol import failure_errors, parse_judge_reply
from groundtrace.analyzer.llm import CallFailure, FailureKind

GOOD = {"context_relevance": 0.9, "adherence": 0.5, "answer_relevance": 1.0, "rationale": "ok"}


def _reply(**changes: object) -> str:
    return json.dumps({**GOOD, **changes})


def _kinds(text: str, finish: str | None = "stop") -> dict[Metric, ProtocolErrorKind]:
    _, _, errors = parse_judge_reply(text, finish)
    return {e.metric: e.kind for e in errors}


def test_valid_reply_is_accepted_with_rationale() -> None:
    scores, rationale, errors = parse_judge_reply(_reply(), "stop")
    assert errors == [] and rationale == "ok"
    assert scores == {
        Metric.CONTEXT_RELEVANCE: 0.9,
        Metric.ADHERENCE: 0.5,
        Metric.ANSWER_RELEVANCE: 1.0,
    }


@pytest.mark.parametrize(("raw", "clamped"), [(-0.01, 0.0), (1.01, 1.0), (1.005, 1.0), (0, 0.0)])
def test_scores_within_tolerance_are_clamped(raw: float, clamped: float) -> None:
    scores, _, errors = parse_judge_reply(_reply(adherence=raw), "stop")
    assert errors == [] and scores[Metric.ADHERENCE] == clamped


@pytest.mark.parametrize("raw", [-0.0101, 1.0101, 5, -1, 80])
def test_out_of_range_is_an_error_not_a_clamp(raw: float) -> None:
    scores, _, errors = parse_judge_reply(_reply(adherence=raw), "stop")
    assert Metric.ADHERENCE not in scores
    assert [(e.metric, e.kind) for e in errors] == [
        (Metric.ADHERENCE, ProtocolErrorKind.OUT_OF_RANGE)
    ]
    assert errors[0].raw == _reply(adherence=raw)
    assert scores[Metric.CONTEXT_RELEVANCE] == 0.9  # other metrics still count


@pytest.mark.parametrize("raw", ["0.8", "high", True, [0.5], {"v": 1}])
def test_non_numeric_is_an_error(raw: object) -> None:
    assert _kinds(_reply(adherence=raw)) == {Metric.ADHERENCE: ProtocolErrorKind.NON_NUMERIC}


def test_overflowing_number_is_non_numeric() -> None:
    text = _reply().replace("0.5", "1e999")  # parses to inf
    assert _kinds(text) == {Metric.ADHERENCE: ProtocolErrorKind.NON_NUMERIC}


def test_nan_is_not_json() -> None:
    text = _reply().replace("0.5", "NaN")
    assert _kinds(text) == dict.fromkeys(Metric, ProtocolErrorKind.MALFORMED_JSON)


@pytest.mark.parametrize("value", ["drop", None])
def test_missing_score_is_an_error(value: object) -> None:
    body = dict(GOOD)
    if value == "drop":
        del body["adherence"]
    else:
        body["adherence"] = None
    assert _kinds(json.dumps(body)) == {Metric.ADHERENCE: ProtocolErrorKind.MISSING}


@pytest.mark.parametrize(
    "text", ["", "adherence: 0.9", '{"adherence": 0.9', "[0.9, 0.5, 1.0]", _reply() + " extra"]
)
def test_malformed_json_fails_every_metric(text: str) -> None:
    kinds = _kinds(text)
    assert kinds == dict.fromkeys(Metric, ProtocolErrorKind.MALFORMED_JSON)


def test_fenced_json_object_is_accepted() -> None:
    assert _kinds("```json\n" + _reply() + "\n```") == {}


@pytest.mark.parametrize(
    "text", ["I'm sorry, but I can't help with that.", "As an AI, I cannot grade this answer."]
)
def test_refusal_fails_every_metric(text: str) -> None:
    assert _kinds(text) == dict.fromkeys(Metric, ProtocolErrorKind.REFUSAL)


def test_truncation_fails_every_metric_even_if_text_parses() -> None:
    kinds = _kinds(_reply(), finish="length")
    assert kinds == dict.fromkeys(Metric, ProtocolErrorKind.TRUNCATION)
    assert _kinds('{"context_relevance": 0.9, "adh', finish="length") == kinds


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (FailureKind.TIMEOUT, ProtocolErrorKind.TIMEOUT),
        (FailureKind.HTTP_ERROR, ProtocolErrorKind.HTTP_ERROR),
        (FailureKind.CONNECTION, ProtocolErrorKind.CONNECTION),
        (FailureKind.INVALID_RESPONSE, ProtocolErrorKind.INVALID_RESPONSE),
        (FailureKind.NOT_SENT, ProtocolErrorKind.NOT_SENT),
    ],
)
def test_call_failures_become_protocol_errors(
    failure: FailureKind, kind: ProtocolErrorKind
) -> None:
    errors = failure_errors(CallFailure(failure, "boom", "k", raw="body"))
    assert {e.metric: e.kind for e in errors} == dict.fromkeys(Metric, kind)
    assert all(e.raw == "body" for e in errors)


def test_every_call_failure_kind_has_a_protocol_error_kind() -> None:
    for failure in FailureKind:
        assert failure_errors(CallFailure(failure, "boom", "k"), (Metric.ADHERENCE,))
