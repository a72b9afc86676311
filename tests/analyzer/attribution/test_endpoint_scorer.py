"""Tier 2: a loopback server in vLLM's ``/v1/completions`` echo+logprobs form.

The server's toy model gives each whitespace-delimited token log-probability -0.5 when the
same word occurs earlier in the text and -4 otherwise, so the answer's score really depends
on which sources the prompt keeps.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from groundtrace.analyzer.attribution._cache import ScoreCache
from groundtrace.analyzer.attribution._context import AblationContext
from groundtrace.analyzer.attribution._endpoint import EndpointScorer, answer_logprobs, chatml
from groundtrace.analyzer.attribution._scorer import ContextScorer
from groundtrace.analyzer.errors import BackendUnavailableError

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
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.bodies.append(body)
        payload: dict[str, Any]
        if self.path != "/v1/completions" or not body.get("echo"):
            payload, status = {"error": {"message": "echo is not supported"}}, 400
        else:
            choice = {"text": body["prompt"] + " x", "logprobs": toy_logprobs(body["prompt"])}
            payload, status = {"choices": [choice]}, 200
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.bodies = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


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
    body = server.bodies[0]
    assert body["echo"] is True and body["model"] == "served-model"
    assert body["prompt"] == chatml(MESSAGES) + ANSWER
    assert body["prompt"].startswith("<|im_start|>user\n[d1] The tower")
    # a rerun through the cache sends nothing
    again = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))
    assert again([(True, True), (False, True)]) == [full, without_d1]
    assert again.passes == 0 and len(server.bodies) == 3
    scorer.close()


def test_a_server_without_prompt_logprobs_is_named(server: _Server) -> None:
    scorer = EndpointScorer(_url(server).removesuffix("/v1") + "/nope", "m")
    with pytest.raises(
        BackendUnavailableError, match=r"answered 400 .*must return prompt log-probabilities"
    ):
        scorer.score_many([MESSAGES], ANSWER)
    with pytest.raises(BackendUnavailableError, match="cannot reach"):
        EndpointScorer("http://127.0.0.1:9/v1", "m", timeout=5).score_many([MESSAGES], ANSWER)


def test_answer_tokens_are_found_by_their_offsets() -> None:
    lp = {"tokens": ["ab", "c", "de", "f"], "token_logprobs": [None, -1.0, -2.0, -3.0],
          "text_offset": [0, 2, 3, 5]}  # fmt: skip
    assert answer_logprobs(lp, 3, 5) == [-2.0]
    assert answer_logprobs(lp, 2, 5) == [-1.0, -2.0]
    with pytest.raises(ValueError, match="no log-probability"):
        answer_logprobs(lp, 0, 3)
    with pytest.raises(ValueError, match="no tokens"):
        answer_logprobs({}, 0, 1)


def test_the_reply_prefix_is_read_but_not_scored(server: _Server) -> None:
    prefix = '{"answer": "'
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER, prefix=prefix)
    (full,) = ContextScorer(EndpointScorer(_url(server), "m"), context)([(True, True)])
    assert server.bodies[0]["prompt"] == chatml(MESSAGES) + prefix + ANSWER
    assert full == pytest.approx(3 * -0.5)  # the three answer words only
