"""The LLM judge against a real local OpenAI-compatible server: request shape, protocol
errors from real replies, caching and the fingerprint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from groundtrace.analyzer.judge import JudgeCase, Metric, ProtocolErrorKind, Rubric, judge_all
from groundtrace.analyzer.judge._llm_judge import LLMJudge
from groundtrace.analyzer.judge._rubric import OUTPUT_SCHEMA
from groundtrace.analyzer.judge._run import summarize_results
from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

GOOD = json.dumps(
    {"context_relevance": 0.9, "adherence": 0.25, "answer_relevance": 1, "rationale": "fine"}
)
REPLIES = {
    "good": Reply(content=GOOD),
    "malformed": Reply(content="adherence is high"),
    "refusal": Reply(content="I'm sorry, I cannot evaluate this."),
    "truncated": Reply(content=GOOD[:30], finish_reason="length"),
    "range": Reply(content=GOOD.replace("0.25", "7")),
    "text": Reply(content=GOOD.replace("0.25", '"high"')),
    "missing": Reply(content=GOOD.replace('"adherence": 0.25, ', "")),
    "server": Reply(status=500),
    "slow": Reply(content=GOOD, delay=3.0),
}


def _handler(req: ServerRequest) -> Reply:
    text = last_user_text(req)
    answer = text.split("ANSWER:\n", 1)[1].split("\n", 1)[0]
    return REPLIES[answer]


def _case(name: str) -> JudgeCase:
    return JudgeCase(name, "Who wrote Hamlet?", ("Hamlet is a play by Shakespeare.",), name)


def _judge(srv: OpenAICompatServer, tmp_path: Path) -> LLMJudge:
    client = ModelClient(
        srv.base_url,
        cache=CallCache(tmp_path / "llm_cache.sqlite"),
        timeout=0.5,
        retry=RetryPolicy(max_attempts=2, base_delay=0.01, seed=0),
    )
    return LLMJudge(client, "judge-model", seed=5)


def test_request_is_one_user_message_json_constrained_at_temperature_zero(tmp_path: Path) -> None:
    with OpenAICompatServer(handler=_handler) as srv:
        result = asyncio.run(_judge(srv, tmp_path).judge(_case("good")))
        body = srv.requests[0].body
    assert [m["role"] for m in body["messages"]] == ["user"]
    prompt = body["messages"][0]["content"]
    assert "QUESTION:\nWho wrote Hamlet?" in prompt and "adherence" in prompt
    assert body["response_format"] == {"type": "json_object", "schema": OUTPUT_SCHEMA}
    assert body["temperature"] == 0.0 and body["seed"] == 5
    assert result.scores == {
        Metric.CONTEXT_RELEVANCE: 0.9,
        Metric.ADHERENCE: 0.25,
        Metric.ANSWER_RELEVANCE: 1.0,
    }
    assert result.rationale == "fine" and not result.needs_review


def test_every_bad_reply_becomes_a_recorded_protocol_error(tmp_path: Path) -> None:
    names = list(REPLIES)
    with OpenAICompatServer(handler=_handler) as srv:
        judge = _judge(srv, tmp_path)
        results = asyncio.run(judge_all(judge, [_case(n) for n in names]))
    by_name = dict(zip(names, results, strict=True))
    expected = {
        "malformed": ProtocolErrorKind.MALFORMED_JSON,
        "refusal": ProtocolErrorKind.REFUSAL,
        "truncated": ProtocolErrorKind.TRUNCATION,
        "range": ProtocolErrorKind.OUT_OF_RANGE,
        "text": ProtocolErrorKind.NON_NUMERIC,
        "missing": ProtocolErrorKind.MISSING,
        "server": ProtocolErrorKind.HTTP_ERROR,
        "slow": ProtocolErrorKind.TIMEOUT,
    }
    for name, kind in expected.items():
        result = by_name[name]
        error = result.error_for(Metric.ADHERENCE)
        assert error is not None and error.kind is kind, name
        assert Metric.ADHERENCE not in result.scores and result.needs_review
    assert by_name["malformed"].errors[0].raw == "adherence is high"
    # Per-metric errors leave the other metrics scored.
    assert by_name["range"].scores[Metric.CONTEXT_RELEVANCE] == 0.9
    summary = summarize_results(results, threshold=0.8)
    assert summary.needs_review == len(expected)
    assert summary.metrics["adherence"].errors_by_kind == {k.value: 1 for k in expected.values()}
    assert summary.metrics["adherence"].scored == 1


def test_rerun_is_served_from_cache(tmp_path: Path) -> None:
    cases = [_case("good"), _case("range")]
    with OpenAICompatServer(handler=_handler) as srv:
        first = asyncio.run(judge_all(_judge(srv, tmp_path), cases))
        calls = len(srv.requests)
        again_judge = _judge(srv, tmp_path)
        again = asyncio.run(judge_all(again_judge, cases))
        assert len(srv.requests) == calls == 2
    assert again_judge.client.stats.cache_hits == 2
    assert [r.scores for r in again] == [r.scores for r in first]


def test_fingerprint_changes_with_each_bound_field(tmp_path: Path) -> None:
    client = ModelClient("http://127.0.0.1:1/v1")
    base = LLMJudge(client, "m", seed=1)
    digest = base.fingerprint(0.8)["digest"]
    assert LLMJudge(client, "m", seed=1).fingerprint(0.8)["digest"] == digest
    variants = [
        LLMJudge(client, "m2", seed=1).fingerprint(0.8),
        LLMJudge(client, "m", seed=2).fingerprint(0.8),
        base.fingerprint(0.7),
        LLMJudge(ModelClient("http://127.0.0.1:2/v1"), "m", seed=1).fingerprint(0.8),
        LLMJudge(client, "m", seed=1, rubric=Rubric("rag_triad_v1", "other")).fingerprint(0.8),
        LLMJudge(client, "m", seed=1, rubric=Rubric("rag_triad_v2", base.rubric.text)).fingerprint(
            0.8
        ),
    ]
    assert len({v["digest"] for v in variants} | {digest}) == len(variants) + 1
