"""Tier 2: a loopback server in vLLM's ``/v1/completions`` echo+logprobs form, TGI's
``/generate`` prefill form, or neither.

The server's toy model gives each whitespace-delimited token log-probability -0.5 when the
same word occurs earlier in the text and -4 otherwise, so the answer's score really depends
on which sources the prompt keeps.
"""

from __future__ import annotations

import asyncio
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from groundtrace.analyzer.attribution._cache import ScoreCache
from groundtrace.analyzer.attribution._context import AblationContext
from groundtrace.analyzer.attribution._endpoint import (
    EndpointScorer,
    chatml,
    echo_tokens,
    prefill_tokens,
    tail_logprobs,
)
from groundtrace.analyzer.attribution._scorer import ContextScorer
from groundtrace.analyzer.errors import BackendUnavailableError
from groundtrace.analyzer.llm import ModelClient, RetryPolicy
from groundtrace.analyzer.llm._limit import _LOCAL

pytestmark = pytest.mark.timeout(60)

DOCS = [("d1", "The tower was built in 1889."), ("d2", "Fuji is tall.")]
MESSAGES = [{"role": "user", "content": f"[d1] {DOCS[0][1]}\n[d2] {DOCS[1][1]}\nWhen built?"}]
ANSWER = "built in 1889."


def _word(token: str) -> str:
    return token.strip().strip('.,?!"{}:').lower()


def toy_logprobs(text: str) -> dict[str, Any]:
    pieces = [m.group(0) for m in re.finditer(r"\s*\S+", text)]
    offsets, at, values = [], 0, []
    seen: set[str] = set()
    for i, piece in enumerate(pieces):
        offsets.append(at)
        at += len(piece)
        values.append(None if i == 0 else (-0.5 if _word(piece) in seen else -4.0))
        seen.add(_word(piece))
    # the one generated token a completion must make
    return {
        "tokens": [*pieces, " x"],
        "token_logprobs": [*values, -1.0],
        "text_offset": [*offsets, at],
    }


class _Handler(BaseHTTPRequestHandler):
    """Serves the forms in the server's ``forms`` (``vllm``, ``tgi``, ``no-echo``: a
    completions server that ignores ``echo``), answering first each status of ``fail_with``."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.bodies.append(body)
        server.events.append(f"request {self.path}")
        payload: Any
        if server.fail_with:
            status = server.fail_with.pop(0)
            payload = {"error": {"message": f"status {status}"}}
        elif self.path == "/v1/completions" and "no-echo" in server.forms:
            generated = {"tokens": [" x"], "token_logprobs": [-1.0],
                         "text_offset": [len(body["prompt"])]}  # fmt: skip
            payload, status = {"choices": [{"text": " x", "logprobs": generated}]}, 200
        elif self.path == "/v1/completions" and "vllm" in server.forms and body.get("echo"):
            choice = {"text": body["prompt"] + " x", "logprobs": toy_logprobs(body["prompt"])}
            payload, status = {"choices": [choice]}, 200
        elif self.path == "/generate" and "tgi" in server.forms:
            params = body["parameters"]
            assert params["decoder_input_details"] and params["details"]
            assert params["max_new_tokens"] == 1
            lp = toy_logprobs(body["inputs"])
            prefill = [{"id": 1, "text": "<s>", "logprob": None}] + [
                {"id": i + 2, "text": t, "logprob": v}
                for i, (t, v) in enumerate(zip(lp["tokens"][:-1], lp["token_logprobs"][:-1]))
            ]
            details = {"finish_reason": "length", "generated_tokens": 1, "prefill": prefill,
                       "tokens": [{"id": 9, "text": " x", "logprob": -1.0}]}  # fmt: skip
            payload, status = {"generated_text": " x", "details": details}, 200
        else:
            payload, status = {"error": {"message": f"{self.path} is not served"}}, 404
        data = json.dumps(payload).encode()
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]
    forms: frozenset[str] = frozenset({"vllm"})
    fail_with: list[int]
    events: list[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fail_with = []
        self.events = []


def _url(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


def test_endpoint_scores_only_the_answer_under_each_ablation(
    server: _Server, tmp_path: Path
) -> None:
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER)
    scorer = EndpointScorer(_url(server), "served-model")
    score = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))
    full, without_d1, without_d2 = score([(True, True), (False, True), (True, False)])
    assert score.tier == "endpoint"
    assert full == pytest.approx(3 * -0.5)  # "built", "in", "1889." all seen in d1
    assert without_d1 == pytest.approx(3 * -4.0)
    assert without_d2 == full
    body = server.bodies[1]  # after the chat form's probe (not served here)
    assert "messages" in server.bodies[0]
    assert body["echo"] is True and body["model"] == "served-model"
    assert body["prompt"] == chatml(MESSAGES) + ANSWER
    assert body["prompt"].startswith("<|im_start|>user\n[d1] The tower")
    # a rerun through the cache sends nothing
    again = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))
    assert again([(True, True), (False, True)]) == [full, without_d1]
    assert again.passes == 0 and len(server.bodies) == 4
    scorer.close()


def test_a_server_without_prompt_logprobs_is_named(server: _Server) -> None:
    base = _url(server).removesuffix("/v1") + "/nope"
    scorer = EndpointScorer(base, "m")
    with pytest.raises(BackendUnavailableError) as refused:
        scorer.score_many([MESSAGES], ANSWER)
    message = str(refused.value)
    assert message.startswith(f"{base} returns no prompt log-probabilities in any form")
    assert f"vllm form: {base}/completions answered 404" in message
    assert f"tgi form: {base.removesuffix('/nope')}/nope/generate answered 404" in message
    assert refused.value.exit_code == 3
    with pytest.raises(BackendUnavailableError, match="cannot reach"):
        EndpointScorer("http://127.0.0.1:9/v1", "m", timeout=5).score_many([MESSAGES], ANSWER)


def test_a_server_that_ignores_echo_is_refused_not_scored_zero(server: _Server) -> None:
    server.forms = frozenset({"no-echo"})
    with pytest.raises(BackendUnavailableError) as refused:
        EndpointScorer(_url(server), "m").score_many([MESSAGES], ANSWER)
    message = str(refused.value)
    assert f"vllm form: {_url(server)}/completions returned no prompt log-probabilities" in message
    assert "the prompt was not echoed" in message
    assert "/generate answered 404" in message


def test_tgi_prefill_form_is_detected_and_kept(server: _Server, tmp_path: Path) -> None:
    server.forms = frozenset({"tgi"})
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER)
    scorer = EndpointScorer(_url(server), "served-model")
    score = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))
    full, without_d1 = score([(True, True), (False, True)])
    assert scorer.form == "tgi"
    assert full == pytest.approx(3 * -0.5) and without_d1 == pytest.approx(3 * -4.0)
    # probed once (vLLM's three forms refused, then TGI), then TGI only
    assert server.events == ["request /v1/chat/completions", "request /v1/completions",
                             "request /v1/completions", "request /generate",
                             "request /generate"]  # fmt: skip
    assert server.bodies[3]["inputs"] == chatml(MESSAGES) + ANSWER
    scorer.close()


def test_a_forced_form_is_the_only_one_asked(server: _Server) -> None:
    with pytest.raises(BackendUnavailableError, match=r"in the tgi form .*/generate answered 404"):
        EndpointScorer(_url(server), "m", form="tgi").score_many([MESSAGES], ANSWER)
    assert server.events == ["request /generate"]
    server.forms = frozenset({"vllm", "tgi"})
    scorer = EndpointScorer(_url(server), "m", form="vllm")
    scorer.score_many([MESSAGES], ANSWER)
    assert scorer.form == "vllm" and server.events[1:] == ["request /v1/completions"]


def test_429_and_5xx_are_retried_with_the_policy(server: _Server) -> None:
    server.fail_with = [429, 503]
    scorer = EndpointScorer(_url(server), "m", retry=RetryPolicy(base_delay=0.001))
    (logprobs,) = scorer.score_many([MESSAGES], ANSWER)
    assert sum(logprobs) == pytest.approx(3 * -0.5)
    # the 429 and the 503 answer the chat probe, retried until its 404; then the echo form
    assert (scorer.requests, scorer.retries, scorer.form) == (4, 2, "vllm")
    server.fail_with = [503] * 3
    spent = EndpointScorer(_url(server), "m", form="vllm",
                           retry=RetryPolicy(max_attempts=3, base_delay=0.001))  # fmt: skip
    with pytest.raises(BackendUnavailableError, match="answered 503"):
        spent.score_many([MESSAGES], ANSWER)
    assert spent.requests == 3 and server.fail_with == []
    server.fail_with = [400]  # not retryable: refused at once
    with pytest.raises(BackendUnavailableError, match="answered 400"):
        EndpointScorer(_url(server), "m", form="vllm").score_many([MESSAGES], ANSWER)


def test_every_attempt_takes_a_start_from_the_endpoint_s_shared_limiter(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    late: list[int] = []

    async def main() -> None:  # as the analysis runs it: the scorer in a worker thread
        loop = asyncio.get_running_loop()
        first = EndpointScorer(_url(server), "m", rate_limit=1000.0, loop=loop,
                               retry=RetryPolicy(base_delay=0.001))  # fmt: skip
        second = EndpointScorer(_url(server) + "/", "m", rate_limit=1000.0, loop=loop)
        await asyncio.to_thread(first.score_many, [MESSAGES, MESSAGES[:1]], ANSWER)
        await asyncio.to_thread(second.score_many, [MESSAGES], ANSWER)
        late.extend(s._limiter.late_starts for s in (first, second) if s._limiter)

    ModelClient.shared_limiter(_url(server), 1000.0)  # the schedule the scorers will share
    bucket = _LOCAL[_url(server)]  # one schedule for every client of the endpoint
    reserve, pause = bucket.reserve, bucket.pause

    def reserving(rate: float | None = None) -> tuple[float, float]:
        server.events.append("start")
        return reserve(rate)

    def pausing(seconds: float) -> None:
        server.events.append("pause")
        pause(seconds)

    monkeypatch.setattr(bucket, "reserve", reserving)
    monkeypatch.setattr(bucket, "pause", pausing)
    server.fail_with = [429]
    asyncio.run(main())
    chat, request = "request /v1/chat/completions", "request /v1/completions"
    # a start the thread reached too late (a busy machine) is asked for again: every extra
    # "start" is one the limiters counted as late, and runs of starts read as one
    assert server.events.count("start") == 6 + sum(late) and len(late) == 2
    events = [e for i, e in enumerate(server.events)
              if e != "start" or server.events[i - 1 : i] != ["start"]]  # fmt: skip
    # the 429 (to the chat probe) pauses the schedule before the retry asks for its start
    assert events == ["start", chat, "pause", "start", chat, "start", request,
                      "start", request, "start", chat, "start", request]  # fmt: skip
    with pytest.raises(ValueError, match="rate_limit must be > 0"):
        EndpointScorer(_url(server), "m", rate_limit=0)
    with pytest.raises(ValueError, match="rate_limit needs loop"):
        EndpointScorer(_url(server), "m", rate_limit=1.0)


def test_tgi_prefill_tokens_are_located_by_their_texts() -> None:
    prefill = [{"text": "<s>", "logprob": None}, {"text": "ab", "logprob": None},
               {"text": "c", "logprob": -1.0}, {"text": "de", "logprob": -2.0}]  # fmt: skip
    texts, values = prefill_tokens({"details": {"prefill": prefill}})
    assert tail_logprobs(texts, values, "abcde", 3) == [-2.0]
    assert tail_logprobs(texts, values, "abcde", 2) == [-1.0, -2.0]
    with pytest.raises(ValueError, match="do not spell the end of the text sent"):
        tail_logprobs(texts, values, "abcdf", 3)


def test_answer_tokens_are_found_from_the_end_of_the_prompt() -> None:
    texts: list[str | None] = ["ab", "c", "de", "f"]
    values: list[object] = [None, -1.0, -2.0, -3.0]
    assert tail_logprobs(texts, values, "abcdef", 5) == [-3.0]
    assert tail_logprobs(texts, values, "abcdef", 4) == [-2.0, -3.0]  # "de" straddles
    assert tail_logprobs(texts, values, "abcdef", 2) == [-1.0, -2.0, -3.0]
    with pytest.raises(ValueError, match="no log-probability"):
        tail_logprobs(texts, values, "abcdef", 0)
    with pytest.raises(ValueError, match=r"no log-probability .*nan"):
        tail_logprobs(texts, [None, -1.0, float("nan"), -3.0], "abcdef", 3)
    with pytest.raises(ValueError, match="the prompt was not echoed"):
        tail_logprobs(["f"], [-3.0], "abcdef", 3)
    with pytest.raises(ValueError, match="prompt token 2 has no text"):
        tail_logprobs(["ab", "c", None, "f"], values, "abcdef", 3)
    # the generated token after the prompt's: usage.prompt_tokens, else the offsets
    reply = {"choices": [{"logprobs": {"tokens": [*texts, " x"],
                                       "token_logprobs": [*values, -9.0],
                                       "text_offset": [0, 2, 3, 5, 6]}}]}  # fmt: skip
    assert echo_tokens(reply, "abcdef") == (texts, values)
    assert echo_tokens({**reply, "usage": {"prompt_tokens": 4}}, "abcdef") == (texts, values)
    with pytest.raises(ValueError, match=r"neither usage\.prompt_tokens nor logprobs\.text_offset"):
        echo_tokens({"choices": [{"logprobs": {"tokens": texts, "token_logprobs": values}}]}, "x")
    with pytest.raises(ValueError, match="no tokens and token_logprobs"):
        echo_tokens({"choices": [{"logprobs": None}]}, "abcdef")


def test_the_reply_prefix_is_read_but_not_scored(server: _Server) -> None:
    prefix = '{"answer": "'
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER, prefix=prefix)
    (full,) = ContextScorer(EndpointScorer(_url(server), "m"), context)([(True, True)])
    assert server.bodies[1]["prompt"] == chatml(MESSAGES) + prefix + ANSWER
    assert full == pytest.approx(3 * -0.5)  # the three answer words only
