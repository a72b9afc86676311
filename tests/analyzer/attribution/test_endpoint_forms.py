"""The endpoint tier against the exact shapes a current vLLM answers in, from a loopback server.

What vLLM's OpenAI server returns (read from its source, ``entrypoints/openai/completion``):

* ``/v1/completions`` with ``echo`` and ``logprobs``: ``echo`` turns ``logprobs`` into the
  request's prompt log-probabilities, and ``choices[0].logprobs`` lists the prompt's tokens
  then the generated ones (``tokens``, ``token_logprobs``: the first ``null``,
  ``text_offset``). A token's text is its id decoded alone, so a character split across
  byte-level tokens comes back as one ``"\\ufffd"`` per token, and ``text_offset`` is the
  running sum of those texts' lengths, not a position in the text sent;
  ``usage.prompt_tokens`` counts the prompt's tokens;
* the same endpoint with ``prompt_logprobs: 0``: ``choices[0].prompt_logprobs`` is one entry
  per prompt token, ``null`` for the first, else ``{token_id: {logprob, rank,
  decoded_token}}`` with the prompt's own token first;
* the failure shapes seen on real servers: a 500 ``{"error": {"message": "4226", ...}}`` for
  ``echo`` (vLLM's Model Runner V2 before its fix, vllm-metal before #694) and
  ``prompt_logprobs: [null]`` (one placeholder, not one entry per token); a 400 for a
  parameter the server does not take (an older vLLM's ``extra_forbidden``).

The toy model is ``test_endpoint_scorer``'s: a word scores -0.5 when it occurs earlier in the
text, else -4.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.attribution._cache import ScoreCache
from groundtrace.analyzer.attribution._context import AblationContext
from groundtrace.analyzer.attribution._endpoint import EndpointScorer, chatml
from groundtrace.analyzer.attribution._scorer import ContextScorer
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import BackendUnavailableError
from groundtrace.analyzer.llm import RetryPolicy
from tests.analyzer.attribution.conftest import loopback
from tests.analyzer.attribution.test_analysis import _trace

pytestmark = pytest.mark.timeout(60)

DOCS = [("d1", "The café opens at nine."), ("d2", "Fuji is tall \U0001f5fb.")]
MESSAGES = [{"role": "user", "content": f"[d1] {DOCS[0][1]}\n[d2] {DOCS[1][1]}\nWhat time?"}]
ANSWER = "opens at nine."
FAST = RetryPolicy(base_delay=0.001)


def _word(token: str) -> str:
    return token.strip().strip('.,?!"{}:').lower()


def tokenize(text: str) -> list[tuple[int, str, float | None]]:
    """(id, text decoded alone, log-probability) per token: whitespace-led words, a non-ASCII
    character split into one token per UTF-8 byte (each decoded alone as U+FFFD)."""
    out: list[tuple[int, str, float | None]] = []
    seen: set[str] = set()
    for piece in re.findall(r"\s*\S+", text):
        value = None if not out else (-0.5 if _word(piece) in seen else -4.0)
        seen.add(_word(piece))
        for part in re.findall(r"[\x00-\x7f]+|[^\x00-\x7f]", piece):
            if part.isascii():
                out.append((100 + len(out), part, value))
            else:
                out.extend((200 + len(out) + b, "\ufffd", value) for b in range(len(part.encode())))
            value = value if value is None else -0.1  # the rest of a split word is cheap
    return out


def _forbidden(field: str) -> tuple[int, Any]:
    """An older vLLM's answer to a field its request model does not have."""
    detail = [{"type": "extra_forbidden", "loc": ["body", field],
               "msg": "Extra inputs are not permitted"}]  # fmt: skip
    return 400, {"object": "error", "message": str(detail), "type": "BadRequestError",
                 "code": 400}  # fmt: skip


def completions(body: dict[str, Any], mode: str) -> tuple[int, Any]:
    """vLLM's reply to ``/v1/completions`` (``mode``: ``v1``; ``mrv2``: echo answers 500 and
    ``prompt_logprobs`` is ``[null]``; ``strict``: ``prompt_logprobs`` refused with 400;
    ``no-echo``: ``echo`` refused with 400)."""
    prompt = body["prompt"]
    tokens = tokenize(prompt)
    generated = (999, " x", -1.0)
    usage = {"prompt_tokens": len(tokens), "completion_tokens": 1,
             "total_tokens": len(tokens) + 1}  # fmt: skip
    if mode == "strict" and "prompt_logprobs" in body:
        return _forbidden("prompt_logprobs")
    if mode == "no-echo" and body.get("echo"):
        return 400, {"error": {"message": "echo is not supported", "type": "invalid_request_error",
                               "code": 400}}  # fmt: skip
    wanted = body.get("prompt_logprobs")
    if wanted is None and body.get("echo"):
        wanted = body.get("logprobs")  # as vLLM's CompletionRequest.to_sampling_params
    if mode == "mrv2" and body.get("echo") and body.get("logprobs") is not None:
        return 500, {"error": {"message": "4226", "type": "InternalServerError", "param": None,
                               "code": 500}}  # fmt: skip
    entries: list[Any] | None = None
    if wanted is not None:
        entries = [None] + [
            {str(i): {"logprob": v, "rank": 1, "decoded_token": t}} for i, t, v in tokens[1:]
        ]
        if mode == "mrv2":
            entries = [None]
    choice: dict[str, Any] = {"index": 0, "text": " x", "logprobs": None,
                              "finish_reason": "length", "prompt_logprobs": entries}  # fmt: skip
    if body.get("echo"):
        choice["text"] = prompt + " x"
    if body.get("logprobs") is not None:
        listed = [*tokens, generated] if body.get("echo") else [generated]
        offsets, at = [], 0
        for _, t, _ in listed:  # vLLM: the running sum of the token texts' lengths
            offsets.append(at)
            at += len(t)
        choice["logprobs"] = {
            "text_offset": offsets, "token_logprobs": [v for _, _, v in listed],
            "tokens": [t for _, t, _ in listed], "top_logprobs": [None for _ in listed],
        }  # fmt: skip
    return 200, {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                 "choices": [choice], "usage": usage}  # fmt: skip


def chat(body: dict[str, Any], mode: str, serves: bool) -> tuple[int, Any]:
    """vLLM's reply to ``/v1/chat/completions``: the messages rendered by the served model's
    template (ChatML here), the final one left open with ``continue_final_message``; the
    top-level ``prompt_logprobs`` as on completions (``serves`` False: a server that ignores
    the parameter)."""
    if mode == "strict" and "prompt_logprobs" in body:
        return _forbidden("prompt_logprobs")
    messages = body["messages"]
    if body.get("continue_final_message") and not body.get("add_generation_prompt", True):
        prompt = chatml(messages[:-1]) + messages[-1]["content"]
    else:
        prompt = chatml(messages)
    tokens = tokenize(prompt)
    reply: dict[str, Any] = {
        "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": " x"},
                     "finish_reason": "length"}],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1,
                  "total_tokens": len(tokens) + 1},
    }  # fmt: skip
    if serves and body.get("prompt_logprobs") is not None:
        reply["prompt_logprobs"] = [None] + [
            {str(i): {"logprob": v, "rank": 1, "decoded_token": t}} for i, t, v in tokens[1:]
        ]
        if mode == "mrv2":
            reply["prompt_logprobs"] = [None]
    return 200, reply


class _VLLM(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.bodies.append(body)
        if self.path == "/v1/completions":
            status, payload = completions(body, server.mode)
        elif self.path == "/v1/chat/completions":
            status, payload = chat(body, server.mode, server.chat)
        else:
            status, payload = 404, {"detail": "Not Found"}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    mode = "v1"
    chat = True
    bodies: list[dict[str, Any]]


@pytest.fixture
def vllm() -> Iterator[_Server]:
    with loopback(_Server, _VLLM) as srv:
        yield srv


def _url(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


@pytest.mark.parametrize("form", ["vllm", "prompt-logprobs", "vllm-chat"])
def test_a_character_split_across_tokens_does_not_shift_the_answer(
    vllm: _Server, form: str, tmp_path: Path
) -> None:
    """'café' is 'caf' + 2 byte tokens and the mountain emoji 4 byte tokens, each '\\ufffd'
    when decoded alone: 6 token characters for 2 characters sent, so vLLM's ``text_offset``
    (the running sum of the token texts) runs 4 past the text after them. The answer's
    tokens are exactly its three words, in every form."""
    context = AblationContext.locate(MESSAGES, DOCS, ANSWER)
    scorer = EndpointScorer(_url(vllm), "served", form=form, retry=FAST)  # type: ignore[arg-type]
    full, without_d1 = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))(
        [(True, True), (False, True)]
    )
    # "opens", "at", "nine." each seen in d1 (-0.5), or not (-4); nothing else scored
    assert full == pytest.approx(3 * -0.5)
    assert without_d1 == pytest.approx(3 * -4.0)
    assert scorer.form == form


def test_auto_names_the_form_that_answered_and_skips_a_refused_echo(
    vllm: _Server, tmp_path: Path
) -> None:
    """A server refusing ``echo`` (400) but serving ``prompt_logprobs``: the probe settles on
    ``prompt-logprobs``, asks only that form afterwards, and the row names it."""
    vllm.mode, vllm.chat = "no-echo", False
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_trace("t1", "twelve metres", ("p1", "p2")).to_json() + "\n")
    res = CliRunner().invoke(build_app(), [
        "attribution", str(traces), "--out", str(tmp_path / "o"), "--endpoint", _url(vllm),
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = json.loads((tmp_path / "o" / "attribution.json").read_text())["rows"]
    assert (row["tier"], row["endpoint_form"]) == ("endpoint", "prompt-logprobs")
    top = max(row["sources"], key=lambda s: s["score"])
    assert top["id"] == "p2" and top["score"] == pytest.approx(2 * 3.5)  # "twelve", "metres"
    assert "| endpoint (prompt-logprobs) |" in (tmp_path / "o" / "attribution.md").read_text()
    asked = ["chat" if "messages" in b else "echo" if "echo" in b else "prompt_logprobs"
             for b in vllm.bodies]  # fmt: skip
    assert asked == ["chat", "echo"] + ["prompt_logprobs"] * 4  # full, 2 removals, empty
    assert all(b["prompt_logprobs"] == 0 and b["max_tokens"] == 1 for b in vllm.bodies[2:])


def test_a_server_with_broken_prompt_logprobs_is_refused_with_each_reason(vllm: _Server) -> None:
    """vLLM's Model Runner V2 before its fix: ``echo`` answers 500 (a KeyError on a token id),
    ``prompt_logprobs`` a one-entry placeholder. Neither is scored; the message says why."""
    vllm.mode = "mrv2"
    scorer = EndpointScorer(_url(vllm), "m", retry=RetryPolicy(max_attempts=2, base_delay=0.001))
    with pytest.raises(BackendUnavailableError) as refused:
        scorer.score_many([MESSAGES], ANSWER)
    said = str(refused.value)
    assert f"vllm form: {_url(vllm)}/completions answered 500" in said and '"4226"' in said
    prompt_tokens = len(tokenize(chatml(MESSAGES) + ANSWER))
    assert (f"vllm-chat form: {_url(vllm)}/chat/completions returned no prompt "
            "log-probabilities for the answer (ValueError: prompt_logprobs holds 1 entries "
            f"for a prompt of {prompt_tokens} tokens") in said  # fmt: skip
    assert (f"prompt-logprobs form: {_url(vllm)}/completions returned no prompt "
            f"log-probabilities for the answer (ValueError: prompt_logprobs holds 1 entries "
            f"for a prompt of {prompt_tokens} tokens") in said  # fmt: skip
    assert "tgi form:" in said and "/generate answered 404" in said
    assert scorer.form == "auto" and scorer.requests == 1 + 2 + 1 + 1  # echo retried once


def test_a_parameter_the_server_refuses_is_named(vllm: _Server) -> None:
    vllm.mode = "strict"
    with pytest.raises(BackendUnavailableError) as refused:
        EndpointScorer(_url(vllm), "m", form="prompt-logprobs").score_many([MESSAGES], ANSWER)
    said = str(refused.value)
    assert said.startswith(f"{_url(vllm)} returns no prompt log-probabilities in the "
                           "prompt-logprobs form")  # fmt: skip
    assert "answered 400" in said and "extra_forbidden" in said
    # the echo form still works on that server, and auto finds it after the chat form's 400
    auto = EndpointScorer(_url(vllm), "m")
    (logprobs,) = auto.score_many([MESSAGES], ANSWER)
    assert auto.form == "vllm" and sum(logprobs) == pytest.approx(3 * -0.5)


@pytest.mark.parametrize("form", ["vllm", "prompt-logprobs"])
def test_an_answer_whose_tokens_do_not_spell_it_is_refused_not_guessed(
    vllm: _Server, form: str
) -> None:
    """A character of the answer split across tokens: its tokens' texts ('\ufffd') do not
    spell it, so which log-probabilities are the answer's is not known."""
    with pytest.raises(BackendUnavailableError, match="do not spell the end of the text sent"):
        EndpointScorer(_url(vllm), "m", form=form).score_many(  # type: ignore[arg-type]
            [MESSAGES], "the café."
        )


def test_a_server_answering_without_usage_or_offsets_is_refused(vllm: _Server) -> None:
    """Echoed tokens but nothing telling the prompt's from the generated one."""
    import httpx

    def strip(request: httpx.Request) -> httpx.Response:
        status, payload = completions(json.loads(request.content), "v1")
        payload.pop("usage")
        payload["choices"][0]["logprobs"].pop("text_offset")
        return httpx.Response(status, json=payload)

    client = httpx.Client(transport=httpx.MockTransport(strip))
    with pytest.raises(BackendUnavailableError, match=r"neither usage\.prompt_tokens nor"):
        EndpointScorer("http://vllm.test/v1", "m", form="vllm", client=client).score_many(
            [MESSAGES], ANSWER
        )


def test_a_dead_endpoint_exits_3_naming_the_url(tmp_path: Path) -> None:
    """Connection refused, and a server that does not answer within --timeout: exit 3 and a
    message on screen naming the URL; no report."""
    import socket

    traces = tmp_path / "traces.jsonl"
    traces.write_text(_trace("t1", "twelve metres", ("p1", "p2")).to_json() + "\n")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    res = CliRunner().invoke(build_app(), [
        "attribution", str(traces), "--out", str(tmp_path / "a"), "--endpoint", dead,
    ])  # fmt: skip
    assert res.exit_code == 3, res.output
    said = " ".join(res.stderr.split())
    assert f"cannot reach {dead}/chat/completions" in said  # the first form probed
    assert not (tmp_path / "a" / "attribution.json").exists()

    silent = socket.socket()  # accepts connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        slow = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        res = CliRunner().invoke(build_app(), [
            "attribution", str(traces), "--out", str(tmp_path / "b"), "--endpoint", slow,
            "--timeout", "0.5",
        ])  # fmt: skip
    finally:
        silent.close()
    assert res.exit_code == 3, res.output
    said = " ".join(res.stderr.split())
    assert f"cannot reach {slow}/chat/completions" in said and "timed out" in said


def test_the_chat_form_leaves_the_template_to_the_server(vllm: _Server, tmp_path: Path) -> None:
    """``auto`` settles on vLLM's chat form: the recorded messages (an agent's tool call
    included, as recorded) and the reply left open after the prefix and the answer; the
    server renders them with the model's own template, so a client template is not used."""
    agent = [
        *MESSAGES[:1],
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "[d3] Doors close late."},
    ]  # fmt: skip
    context = AblationContext.locate(agent, DOCS, ANSWER, prefix='{"answer": "')

    def unused(messages: Any) -> str:
        raise AssertionError("the chat form formats nothing on the client")

    scorer = EndpointScorer(_url(vllm), "served", template=unused)
    full, without_d1 = ContextScorer(scorer, context, ScoreCache(tmp_path / "s.sqlite"))(
        [(True, True), (False, True)]
    )
    assert scorer.form == "vllm-chat" and scorer.requests == 2
    assert full == pytest.approx(3 * -0.5) and without_d1 == pytest.approx(3 * -4.0)
    body = vllm.bodies[0]
    assert body["messages"][:3] == agent and body["messages"][3] == {
        "role": "assistant",
        "content": '{"answer": "' + ANSWER,
    }
    assert (body["add_generation_prompt"], body["continue_final_message"]) == (False, True)
    assert body["prompt_logprobs"] == 0 and "prompt" not in body
