"""Model answerer and pair judge against a real local OpenAI-compatible server.

Protocol errors stay visible (never imputed), an unvalidated judge is review-only, and a
killed run resumes from the model-call cache without repeating completed calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import (
    Answer,
    AuditResult,
    AuditSettings,
    Corpus,
    PairLabel,
    Question,
    Source,
)
from groundtrace.analyzer.audit._answerers import read_stance_reply
from groundtrace.analyzer.audit._judge import JUDGE_PROMPT_VERSION, PairJudge
from groundtrace.analyzer.audit._records import PairError
from groundtrace.analyzer.audit._run import run_audit
from groundtrace.analyzer.audit._structured import CallError
from groundtrace.analyzer.audit._validate import validate_labels
from groundtrace.analyzer.judge._fingerprint import fingerprint, fingerprint_digest
from groundtrace.analyzer.llm import ModelClient, RetryPolicy
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text

_JUDGE = '{"label": "divergent", "topic": "scope", "significance": "medium"}'


def _schema_keys(req: ServerRequest) -> set[str]:
    fmt = req.body.get("response_format") or {}
    return set((fmt.get("schema") or {}).get("properties", {}))


def _reply(req: ServerRequest) -> Reply:
    """Answers: a stance chosen by a hash of the prompt; pairs: always divergent."""
    if "label" in _schema_keys(req):
        return Reply(content=_JUDGE, delay=0.02)
    text = last_user_text(req)
    pick = zlib.crc32(text.encode()) % 3
    listed = req.body["response_format"]["schema"]["properties"].get("points")
    points = listed["items"]["enum"] if listed else []
    stance = ["yes", "conditional", "absent"][pick]
    chosen = [points[pick % len(points)]] if stance == "conditional" and points else []
    word = ["alpha", "beta", "gamma", "delta"][zlib.crc32(text[::-1].encode()) % 4]
    body = {"stance": stance, "points": chosen, "answer": f"{stance}, {word}", "quote": ""}
    return Reply(content=json.dumps(body), delay=0.02)


def _answer(source: str, stance: str, text: str) -> Answer:
    return Answer(question_id="q", source_id=source, stance=stance, text=text)  # type: ignore[arg-type]


QUESTION = Question(id="q", text="Must I?", scope="general", topics=("duty",))


@pytest.mark.parametrize(
    ("content", "finish", "kind", "says"),
    [
        ("the answers differ", None, "malformed_json", "not JSON: 'the answers differ'"),
        ('{"topic": "x", "significance": "low"}', None, "missing", "no label"),
        ('{"label": "sort of", "topic": "x", "significance": "low"}', None, "out_of_range",
         "unknown label 'sort of'"),
        ('{"label": "divergent", "topic": "x", "significance": "huge"}', None, "out_of_range",
         "unknown significance 'huge'"),
        ('{"label": "divergent", "topic": "x", "signif', "length", "truncation", "token budget"),
    ],
)  # fmt: skip
def test_a_malformed_judge_reply_is_a_visible_protocol_error(
    content: str, finish: str | None, kind: str, says: str
) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(content=content, finish_reason=finish)) as srv:

        async def go() -> PairLabel | PairError:
            client = ModelClient(srv.base_url, retry=RetryPolicy(max_attempts=1))
            try:
                return await PairJudge(client, "m").label(
                    QUESTION, _answer("a", "yes", "Yes, always."), _answer("b", "yes", "Only B.")
                )
            finally:
                await client.aclose()

        result = asyncio.run(go())
    assert isinstance(result, PairError) and result.kind == kind
    assert (result.question_id, result.source_a, result.source_b) == ("q", "a", "b")
    assert says in result.message  # the message names the field at fault


def test_the_pair_judge_fingerprint_is_the_judge_fingerprint() -> None:
    client = ModelClient("http://127.0.0.1:1/v1")
    judge = PairJudge(client, "m", seed=3)
    fields = judge.fingerprint_fields
    assert fields == fingerprint(
        endpoint="http://127.0.0.1:1/v1", model="m", rubric_version=JUDGE_PROMPT_VERSION,
        rubric_digest=fields["rubric_sha256"], schema_digest=fields["schema_sha256"],
        threshold=None, temperature=0.0, seed=3,
    )  # fmt: skip
    assert judge.fingerprint == fields["digest"] == fingerprint_digest(fields)
    others = [
        PairJudge(client, "m2", seed=3),
        PairJudge(client, "m", seed=4),
        PairJudge(ModelClient("http://127.0.0.1:2/v1"), "m", seed=3),
    ]
    assert len({judge.fingerprint, *(o.fingerprint for o in others)}) == 4


def test_a_malformed_answer_reply_is_kept_as_an_error_not_a_stance() -> None:
    reply = read_stance_reply(CallError("malformed_json", "not JSON: 'I think yes'"), [])
    assert reply["error"].startswith("malformed_json") and reply["points"] == []
    assert read_stance_reply({"stance": "maybe"}, [])["error"].startswith("out_of_range")
    bad_point = read_stance_reply({"stance": "conditional", "points": ["z"]}, ["a"])
    assert "not in" in bad_point["error"]
    good = read_stance_reply({"stance": "conditional", "points": ["a"], "answer": "If a."}, ["a"])
    assert (good["stance"], good["points"], "error" in good) == ("conditional", ["a"], False)


def test_an_unvalidated_judge_is_review_only_and_its_errors_are_counted() -> None:
    sources = tuple(Source(id=f"s{i}", group="g", title=f"S{i}", text="t") for i in range(4))
    texts = ["Yes, for files.", "Yes, for libraries.", "Yes, everywhere.", "Yes, mostly."]

    async def answer(question: Question, source: Source) -> Answer:
        return Answer(question_id=question.id, source_id=source.id, stance="conditional",
                      points=(source.id,), text=texts[int(source.id[1])])  # fmt: skip

    calls = {"n": 0}

    def handler(req: ServerRequest) -> Reply:
        calls["n"] += 1
        return Reply(content="no idea" if "libraries" in last_user_text(req) else _JUDGE)

    corpus = Corpus(name="c", sources=sources, questions=(QUESTION,))
    with OpenAICompatServer(handler=handler) as srv:

        async def go(validation: object) -> AuditResult:
            client = ModelClient(srv.base_url, retry=RetryPolicy(max_attempts=1))
            try:
                return await run_audit(
                    corpus,
                    answer,
                    AuditSettings(),
                    labeller=PairJudge(client, "m"),
                    judge_validation=validation,
                )  # type: ignore[arg-type]
            finally:
                await client.aclose()

        run = asyncio.run(go(None))
        judge = PairJudge(ModelClient(srv.base_url), "m")
        gold = [
            PairLabel(question_id=f"v{i % 6}", source_a="a", source_b=f"b{i:03d}",
                      label="divergent" if i % 2 else "consistent")
            for i in range(60)
        ]  # fmt: skip
        ok = validate_labels(gold, gold, labeller=judge.name, fingerprint=judge.fingerprint)
        assert ok.validated
        counted = asyncio.run(go(ok))
    assert len(run.pair_errors) == 3 and {e.kind for e in run.pair_errors} == {"malformed_json"}
    assert len(run.review) == 3 and all(p.review_only for p in run.review)
    # review-only: every counted label is the baseline's
    assert len(run.pairs) == 6 and {p.decided_by for p in run.pairs} == {"baseline"}
    assert calls["n"] == 12
    # validated: the judge's labels count; its protocol errors are left out, not imputed
    assert {p.decided_by for p in counted.pairs} == {"judge"} and counted.review == ()
    assert len(counted.pairs) == 3 and len(counted.pair_errors) == 3


def _cli(out: Path, url: str) -> list[str]:
    return [
        sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()",
        "audit", "run", "--out", str(out),
        "--answerer", url, "--model", "m", "--judge", url, "--judge-model", "m",
        "--questions", "patent-grant,same-licence", "--sources", "14", "--concurrency", "2",
    ]  # fmt: skip


def test_a_killed_run_resumes_without_repeating_completed_calls(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with OpenAICompatServer(handler=_reply) as srv:
        proc = subprocess.Popen(_cli(out, srv.base_url), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 60
        while srv.request_count < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        at_kill = srv.request_count
        assert not (out / "run.json").exists()  # killed before it finished
        done = subprocess.run(
            _cli(out, srv.base_url), env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        total = srv.request_count
        again = subprocess.run(
            _cli(out, srv.base_url), env=env, capture_output=True, text=True, check=False
        )
        assert again.returncode == 0, again.stderr
        bodies = [json.dumps(r.body, sort_keys=True) for r in srv.requests]
    run = read(out / "run.json", AuditResult)
    assert srv.request_count == total  # a finished run is served from the cache entirely
    repeated = len(bodies) - len(set(bodies))
    assert repeated <= 2  # at most the calls in flight (concurrency 2) when it was killed
    assert at_kill >= 12 and total > at_kill
    assert run.summary.n_answers > 0 and any(p.decided_by == "judge" for p in run.review)
