"""The local OpenAI-compatible test server, exercised with the real ``openai`` client."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.support.openai_server import (
    OpenAICompatServer,
    Reply,
    ServerRequest,
    ToolCallReply,
    default_handler,
)

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


def _client(srv: OpenAICompatServer, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0, **kw)  # type: ignore[arg-type]


def test_chat_echo_and_usage_and_recorded_request() -> None:
    with OpenAICompatServer() as srv:
        out = _client(srv).chat.completions.create(model="m1", messages=MESSAGES, temperature=0)
    assert out.choices[0].message.content == "echo: hello there"
    assert out.choices[0].finish_reason == "stop"
    assert out.model == "m1"
    assert out.usage is not None and out.usage.completion_tokens == 3
    assert srv.requests[0].path == "/v1/chat/completions"
    assert srv.requests[0].body["temperature"] == 0


def test_stream_with_usage_and_done() -> None:
    with OpenAICompatServer() as srv:
        stream = _client(srv).chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "echo: hello there"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


def test_tool_call_non_stream_and_stream() -> None:
    msgs = [{"role": "user", "content": 'call:get_weather {"city": "Paris"}'}]
    with OpenAICompatServer() as srv:
        client = _client(srv)
        out = client.chat.completions.create(model="m", messages=msgs, tools=TOOLS)
        chunks = list(
            client.chat.completions.create(model="m", messages=msgs, tools=TOOLS, stream=True)
        )
    call = out.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"city": "Paris"}  # type: ignore[union-attr]
    assert out.choices[0].finish_reason == "tool_calls"
    args = "".join(
        tc.function.arguments or ""
        for c in chunks
        for tc in (c.choices[0].delta.tool_calls or [])
        if tc.function is not None
    )
    assert json.loads(args) == {"city": "Paris"}


@pytest.mark.parametrize(
    ("status", "exc"),
    [
        (400, openai.BadRequestError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
    ],
)
def test_http_errors(status: int, exc: type[Exception]) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(status=status, error_message="nope")) as srv:
        with pytest.raises(exc) as info:
            _client(srv).chat.completions.create(model="m", messages=MESSAGES)
    assert "nope" in str(info.value)


def test_delay_triggers_client_timeout() -> None:
    with OpenAICompatServer(handler=lambda r: Reply(delay=30)) as srv:
        with pytest.raises(openai.APITimeoutError):
            _client(srv, timeout=0.3).chat.completions.create(model="m", messages=MESSAGES)


def test_broken_stream_raises_mid_iteration() -> None:
    with OpenAICompatServer(handler=lambda r: Reply(content="a" * 40, break_after=3)) as srv:
        stream = _client(srv).chat.completions.create(model="m", messages=MESSAGES, stream=True)
        got = []
        with pytest.raises((httpx.RemoteProtocolError, openai.APIConnectionError)):
            for chunk in stream:
                got.append(chunk)
    assert len(got) == 3


def test_models_and_responses() -> None:
    with OpenAICompatServer(models=("a", "b")) as srv:
        client = _client(srv)
        assert [m.id for m in client.models.list()] == ["a", "b"]
        resp = client.responses.create(model="m", input="what now")
        events = [e.type for e in client.responses.create(model="m", input="xy", stream=True)]
    assert resp.output_text == "echo: what now"
    assert events[0] == "response.created" and events[-1] == "response.completed"


def test_custom_handler_sees_request() -> None:
    def handler(req: ServerRequest) -> Reply:
        if req.body.get("model") == "tool":
            return Reply(content=None, tool_calls=(ToolCallReply("f", '{"x":1}', id="c9"),))
        return default_handler(req)

    with OpenAICompatServer(handler=handler) as srv:
        out = _client(srv).chat.completions.create(model="tool", messages=MESSAGES)
    assert out.choices[0].message.tool_calls[0].id == "c9"  # type: ignore[index]
