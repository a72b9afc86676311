"""OpenAIInstrumentor against the real local OpenAI-compatible server."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.resources.chat.completions import completions as chat_module
from openai.resources.responses import responses as responses_module
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.redaction import Redactor
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

MESSAGES = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Who directed Jaws?"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
TOOL_MESSAGES = [{"role": "user", "content": 'call:get_weather {"city": "Paris"}'}]


pytestmark = pytest.mark.usefixtures("capture_everything")


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        yield exp
    finally:
        inst.uninstrument()
        provider.shutdown()


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


def client(srv: OpenAICompatServer, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0, **kw)


def aclient(srv: OpenAICompatServer, **kw: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=srv.base_url, api_key="test", max_retries=0, **kw)


def only_span(exp: InMemorySpanExporter) -> ReadableSpan:
    spans = exp.get_finished_spans()
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def unpatched(fn: Any) -> Any:
    """Run ``fn`` with the instrumentation suppressed (the app's view without tracing)."""
    with suppress_instrumentation():
        return fn()


# ------------------------------------------------------------------------------------------
# non-streaming
# ------------------------------------------------------------------------------------------


def test_sync_chat_span_has_llm_attributes(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    out = client(server).chat.completions.create(
        model="m1",
        messages=MESSAGES,
        temperature=0,
        top_p=0.5,
        max_tokens=32,
        seed=7,
        stop=["\n"],
        response_format={"type": "json_object"},
    )
    span = only_span(exporter)
    a = attrs(span)
    assert span.name == "chat m1"
    assert a[sc.GT_ACTION] == sc.Action.LLM
    assert a[sc.OI_SPAN_KIND] == "LLM"
    assert a[sc.GENAI_OPERATION_NAME] == "chat"
    assert a[sc.GENAI_PROVIDER_NAME] == "openai"
    assert a[sc.GT_LLM_API] == sc.LLMApi.CHAT_COMPLETIONS
    assert a[sc.GT_LLM_STREAM] is False
    assert a[sc.GENAI_REQUEST_MODEL] == "m1"
    assert a[sc.GENAI_REQUEST_TEMPERATURE] == 0.0
    assert a[sc.GENAI_REQUEST_TOP_P] == 0.5
    assert a[sc.GENAI_REQUEST_MAX_TOKENS] == 32
    assert a[sc.GENAI_REQUEST_SEED] == 7
    assert a[sc.GENAI_REQUEST_STOP_SEQUENCES] == ("\n",)
    assert a[sc.GENAI_OUTPUT_TYPE] == "json"
    assert a[sc.SERVER_ADDRESS] == "127.0.0.1"
    assert a[sc.SERVER_PORT] == server.port
    assert a[sc.GT_LLM_BASE_URL] == server.base_url
    # the lossless request is exactly what reached the server
    assert json.loads(a[sc.GT_LLM_REQUEST]) == server.requests[0].body
    assert json.loads(a[sc.OI_LLM_INVOCATION_PARAMETERS])["seed"] == 7
    assert a[sc.indexed(sc.OI_LLM_INPUT_MESSAGES, 1, sc.OI_MESSAGE_ROLE)] == "user"
    assert a[sc.indexed(sc.OI_LLM_INPUT_MESSAGES, 1, sc.OI_MESSAGE_CONTENT)] == "Who directed Jaws?"
    assert json.loads(a[sc.GENAI_INPUT_MESSAGES])[0]["role"] == "system"
    assert a[sc.GT_LLM_OUTPUT_TEXT] == out.choices[0].message.content == "echo: Who directed Jaws?"
    assert (
        a[sc.indexed(sc.OI_LLM_OUTPUT_MESSAGES, 0, sc.OI_MESSAGE_CONTENT)]
        == "echo: Who directed Jaws?"
    )
    assert a[sc.GENAI_RESPONSE_ID] == out.id
    assert a[sc.GENAI_RESPONSE_MODEL] == "m1"
    assert a[sc.GENAI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert out.usage is not None
    assert a[sc.GENAI_USAGE_INPUT_TOKENS] == out.usage.prompt_tokens
    assert a[sc.GENAI_USAGE_OUTPUT_TOKENS] == out.usage.completion_tokens
    assert a[sc.OI_LLM_TOKEN_COUNT_TOTAL] == out.usage.total_tokens
    assert span.status.status_code == StatusCode.UNSET


def test_return_value_is_unchanged(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    c = client(server)
    traced = c.chat.completions.create(model="m", messages=MESSAGES)
    plain = unpatched(lambda: c.chat.completions.create(model="m", messages=MESSAGES))
    assert type(traced) is type(plain)
    assert traced.model_dump(exclude={"id"}) == plain.model_dump(exclude={"id"})
    assert len(exporter.get_finished_spans()) == 1  # the suppressed call made no span


async def test_async_chat(exporter: InMemorySpanExporter, server: OpenAICompatServer) -> None:
    out = await aclient(server).chat.completions.create(model="am", messages=MESSAGES)
    a = attrs(only_span(exporter))
    assert out.choices[0].message.content == "echo: Who directed Jaws?"
    assert a[sc.GT_LLM_OUTPUT_TEXT] == "echo: Who directed Jaws?"
    assert a[sc.GENAI_REQUEST_MODEL] == "am"


def test_missing_usage_is_fine(exporter: InMemorySpanExporter) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(content="x", include_usage=False)) as srv:
        out = client(srv).chat.completions.create(model="m", messages=MESSAGES)
    a = attrs(only_span(exporter))
    assert out.usage is None
    assert sc.GENAI_USAGE_INPUT_TOKENS not in a
    assert a[sc.GT_LLM_OUTPUT_TEXT] == "x"


def test_span_nests_under_current_span(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("parent") as parent:
        client(server).chat.completions.create(model="m", messages=MESSAGES)
    llm = next(s for s in exporter.get_finished_spans() if s.name == "chat m")
    assert llm.parent is not None
    assert llm.parent.span_id == parent.get_span_context().span_id


# ------------------------------------------------------------------------------------------
# tool calls
# ------------------------------------------------------------------------------------------


def _tool_call_attrs(a: dict[str, Any]) -> tuple[Any, Any, Any]:
    prefix, calls = sc.OI_LLM_OUTPUT_MESSAGES, sc.OI_MESSAGE_TOOL_CALLS
    return (
        a.get(sc.nested(prefix, 0, calls, 0, sc.OI_TOOL_CALL_ID)),
        a.get(sc.nested(prefix, 0, calls, 0, sc.OI_TOOL_CALL_FUNCTION_NAME)),
        a.get(sc.nested(prefix, 0, calls, 0, sc.OI_TOOL_CALL_FUNCTION_ARGUMENTS)),
    )


def test_tool_call_non_stream(exporter: InMemorySpanExporter, server: OpenAICompatServer) -> None:
    out = client(server).chat.completions.create(model="m", messages=TOOL_MESSAGES, tools=TOOLS)
    a = attrs(only_span(exporter))
    call = out.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert _tool_call_attrs(a) == (call.id, "get_weather", '{"city": "Paris"}')
    assert a[sc.GENAI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert json.loads(a[sc.indexed(sc.OI_LLM_TOOLS, 0, sc.OI_TOOL_JSON_SCHEMA)]) == TOOLS[0]
    assert json.loads(a[sc.GT_LLM_REQUEST])["tools"] == TOOLS
    assert sc.GT_LLM_OUTPUT_TEXT not in a  # no text content: nothing invented


def test_tool_call_stream_aggregates_deltas(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    stream = client(server).chat.completions.create(
        model="m", messages=TOOL_MESSAGES, tools=TOOLS, stream=True
    )
    chunks = list(stream)
    a = attrs(only_span(exporter))
    assert len(chunks) > 3
    assert _tool_call_attrs(a) == ("call_0", "get_weather", '{"city": "Paris"}')
    out_messages = json.loads(a[sc.GENAI_OUTPUT_MESSAGES])
    assert out_messages[0]["parts"][0]["type"] == "tool_call"


# ------------------------------------------------------------------------------------------
# streaming
# ------------------------------------------------------------------------------------------


def test_sync_stream_span_ends_on_exhaustion(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    c = client(server)
    stream = c.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    assert isinstance(stream, openai.Stream)
    assert exporter.get_finished_spans() == ()  # nothing read eagerly, span still open
    first = next(stream)
    assert exporter.get_finished_spans() == ()
    rest = list(stream)
    chunks = [first, *rest]
    a = attrs(only_span(exporter))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == "echo: Who directed Jaws?"
    assert a[sc.GT_LLM_OUTPUT_TEXT] == text
    assert a[sc.GT_LLM_STREAM] is True and a[sc.GENAI_REQUEST_STREAM] is True
    assert sc.GT_LLM_STREAM_INCOMPLETE not in a
    assert (
        a[sc.GENAI_USAGE_OUTPUT_TOKENS]
        == chunks[-1].usage.total_tokens - chunks[-1].usage.prompt_tokens
    )  # type: ignore[union-attr]
    plain = unpatched(
        lambda: list(
            c.chat.completions.create(
                model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
            )
        )
    )
    assert [ch.model_dump(exclude={"id"}) for ch in chunks] == [
        ch.model_dump(exclude={"id"}) for ch in plain
    ]


async def test_async_stream(exporter: InMemorySpanExporter, server: OpenAICompatServer) -> None:
    stream = await aclient(server).chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    assert isinstance(stream, openai.AsyncStream)
    pieces = [ch.choices[0].delta.content or "" async for ch in stream if ch.choices]
    a = attrs(only_span(exporter))
    assert "".join(pieces) == a[sc.GT_LLM_OUTPUT_TEXT] == "echo: Who directed Jaws?"


def test_stream_break_then_close_ends_span(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    stream = client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    for i, _ in enumerate(stream):
        if i == 2:
            break
    assert exporter.get_finished_spans() == ()
    stream.close()
    a = attrs(only_span(exporter))
    assert a[sc.GT_LLM_STREAM_INCOMPLETE] is True
    assert a[sc.GT_LLM_OUTPUT_TEXT] == "echo: Who"[:8]  # role chunk + two 4-char chunks
    stream.close()  # idempotent
    assert len(exporter.get_finished_spans()) == 1


def test_stream_context_manager_exit_ends_span(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    with client(server).chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    ) as stream:
        next(stream)
        assert exporter.get_finished_spans() == ()
    assert attrs(only_span(exporter))[sc.GT_LLM_STREAM_INCOMPLETE] is True


def test_abandoned_stream_ends_span_on_gc(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    stream = client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    next(stream)
    del stream
    gc.collect()
    a = attrs(only_span(exporter))
    assert a[sc.GT_LLM_STREAM_INCOMPLETE] is True


async def test_abandoned_async_stream_ends_span_on_gc(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    stream = await aclient(server).chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    await stream.__anext__()
    del stream
    gc.collect()
    assert attrs(only_span(exporter))[sc.GT_LLM_STREAM_INCOMPLETE] is True


def test_broken_stream_raises_same_error_and_ends_span(exporter: InMemorySpanExporter) -> None:
    def handler(req: ServerRequest) -> Reply:
        return Reply(content="abcdefghijklmnopqrstuvwxyz", break_after=3)

    with OpenAICompatServer(handler=handler) as srv:
        c = client(srv)
        got: list[Any] = []
        with pytest.raises(Exception) as traced_err:
            for ch in c.chat.completions.create(model="m", messages=MESSAGES, stream=True):
                got.append(ch)
        with pytest.raises(Exception) as plain_err:
            unpatched(
                lambda: list(c.chat.completions.create(model="m", messages=MESSAGES, stream=True))
            )
    assert type(traced_err.value) is type(plain_err.value)
    span = only_span(exporter)
    a = attrs(span)
    assert len(got) == 3
    assert span.status.status_code == StatusCode.ERROR
    assert a[sc.ERROR_TYPE] == type(traced_err.value).__qualname__
    assert a[sc.GT_LLM_STREAM_INCOMPLETE] is True
    assert a[sc.GT_LLM_OUTPUT_TEXT] == "abcdefgh"


# ------------------------------------------------------------------------------------------
# failures
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        (400, openai.BadRequestError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_http_errors_pass_through(
    exporter: InMemorySpanExporter, status: int, exc_type: type[Exception], stream: bool
) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(status=status, error_message="bad")) as srv:
        c = client(srv)
        with pytest.raises(exc_type) as traced:
            c.chat.completions.create(model="m", messages=MESSAGES, stream=stream)
        with pytest.raises(exc_type) as plain:
            unpatched(
                lambda: c.chat.completions.create(model="m", messages=MESSAGES, stream=stream)
            )
    assert str(traced.value) == str(plain.value)
    span = only_span(exporter)
    assert span.status.status_code == StatusCode.ERROR
    assert attrs(span)[sc.ERROR_TYPE] == exc_type.__name__
    assert any(e.name == "exception" for e in span.events)


async def test_async_http_error(exporter: InMemorySpanExporter) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(status=500)) as srv:
        with pytest.raises(openai.InternalServerError):
            await aclient(srv).chat.completions.create(model="m", messages=MESSAGES)
    assert attrs(only_span(exporter))[sc.ERROR_TYPE] == "InternalServerError"


def test_timeout(exporter: InMemorySpanExporter) -> None:
    with OpenAICompatServer(handler=lambda r: Reply(delay=30)) as srv:
        with pytest.raises(openai.APITimeoutError):
            client(srv, timeout=0.3).chat.completions.create(model="m", messages=MESSAGES)
    span = only_span(exporter)
    assert attrs(span)[sc.ERROR_TYPE] == "APITimeoutError"
    assert span.status.status_code == StatusCode.ERROR


# ------------------------------------------------------------------------------------------
# responses API and raw responses
# ------------------------------------------------------------------------------------------


def test_responses_create(exporter: InMemorySpanExporter, server: OpenAICompatServer) -> None:
    out = client(server).responses.create(
        model="r1", input="hello", instructions="be nice", temperature=0.2, max_output_tokens=9
    )
    a = attrs(only_span(exporter))
    assert a[sc.GT_LLM_API] == sc.LLMApi.RESPONSES
    assert a[sc.GT_LLM_OUTPUT_TEXT] == out.output_text == "echo: hello"
    assert a[sc.GENAI_REQUEST_MAX_TOKENS] == 9
    assert a[sc.indexed(sc.OI_LLM_INPUT_MESSAGES, 0, sc.OI_MESSAGE_ROLE)] == "system"
    assert a[sc.indexed(sc.OI_LLM_INPUT_MESSAGES, 1, sc.OI_MESSAGE_CONTENT)] == "hello"
    assert json.loads(a[sc.GT_LLM_REQUEST]) == server.requests[0].body
    assert a[sc.GENAI_USAGE_INPUT_TOKENS] == out.usage.input_tokens  # type: ignore[union-attr]


def test_responses_stream(exporter: InMemorySpanExporter, server: OpenAICompatServer) -> None:
    events = list(client(server).responses.create(model="r", input="abc def", stream=True))
    a = attrs(only_span(exporter))
    assert events[-1].type == "response.completed"
    assert a[sc.GT_LLM_OUTPUT_TEXT] == "echo: abc def"
    assert a[sc.GENAI_RESPONSE_ID] == "resp_0"


def test_with_raw_response_still_works(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    raw = client(server).chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    parsed = raw.parse()
    assert parsed.choices[0].message.content == "echo: Who directed Jaws?"
    a = attrs(only_span(exporter))
    assert a[sc.GENAI_REQUEST_MODEL] == "m"


# ------------------------------------------------------------------------------------------
# instrument / uninstrument, suppression, settings
# ------------------------------------------------------------------------------------------


def test_uninstrument_restores_originals_and_reinstrument_is_single() -> None:
    # class __dict__ entries: attribute access on a wrapped method builds a new bound wrapper
    classes = (
        chat_module.Completions,
        chat_module.AsyncCompletions,
        responses_module.Responses,
        responses_module.AsyncResponses,
    )
    originals = tuple(vars(c)["create"] for c in classes)
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    inst.instrument(tracer_provider=provider)  # idempotent
    assert vars(chat_module.Completions)["create"] is not originals[0]
    inst.uninstrument()
    inst.uninstrument()
    after = tuple(vars(c)["create"] for c in classes)
    assert all(a is b for a, b in zip(after, originals, strict=True))
    inst.instrument(tracer_provider=provider)
    try:
        with OpenAICompatServer() as srv:
            client(srv).chat.completions.create(model="m", messages=MESSAGES)
    finally:
        inst.uninstrument()
    assert len(exp.get_finished_spans()) == 1
    assert OpenAIInstrumentor().instrumentation_dependencies() == ("openai >= 1.0",)


def test_suppression_means_no_span(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    with suppress_instrumentation():
        out = client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert out.choices[0].message.content == "echo: Who directed Jaws?"
    assert exporter.get_finished_spans() == ()


def test_disabled_settings_means_no_span(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(enabled=False))
    client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert exporter.get_finished_spans() == ()


def test_content_capture_off(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(capture=frozenset()))
    client(server).chat.completions.create(model="m", messages=TOOL_MESSAGES, tools=TOOLS, seed=1)
    a = attrs(only_span(exporter))
    assert a[sc.GT_CONTENT_CAPTURED] is False
    request = json.loads(a[sc.GT_LLM_REQUEST])
    assert "messages" not in request and request["seed"] == 1
    text = json.dumps(a)
    assert "Paris" not in text  # neither the prompt nor the tool arguments leak
    assert sc.GENAI_INPUT_MESSAGES not in a and sc.GENAI_OUTPUT_MESSAGES not in a
    # the structure of the requested tool call is still there
    assert _tool_call_attrs(a)[1] == "get_weather"


def test_failing_redactor_never_breaks_the_call(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    def broken(text: str) -> tuple[str, tuple[str, ...]]:
        raise RuntimeError("masker bug")

    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, redact=broken))
    out = client(server).chat.completions.create(model="m", messages=MESSAGES)
    a = attrs(only_span(exporter))
    assert out.choices[0].message.content == "echo: Who directed Jaws?"
    assert "Who directed Jaws?" not in json.dumps(a)  # unmasked text never leaks
    assert "redaction_error" in a[sc.GT_REDACTED]


def test_generator_messages_are_sent_and_recorded(
    exporter: InMemorySpanExporter, server: OpenAICompatServer
) -> None:
    out = client(server).chat.completions.create(model="m", messages=(m for m in MESSAGES))
    a = attrs(only_span(exporter))
    assert out.choices[0].message.content == "echo: Who directed Jaws?"
    assert json.loads(a[sc.GT_LLM_REQUEST])["messages"] == MESSAGES
    assert server.requests[0].body["messages"] == MESSAGES


MARK = "Zyxwvut"


def _vendor_call(srv: OpenAICompatServer, base_url: str | None = None) -> None:
    """A chat completion with content in every vendor extension: a vLLM-style ``documents``
    list, a key and a nested value in ``extra_body``, and a header (the query string is in
    ``test_hostile_values``: this server routes on the whole path)."""
    extensions = {
        "documents": [{"title": f"{MARK}-title", "text": f"{MARK}-doc bob@example.com"}],
        f"{MARK}-key": 1,
        "chat_template_kwargs": {"note": f"{MARK}-template"},
        "top_k": 20,
    }
    llm = openai.OpenAI(base_url=base_url or srv.base_url, api_key="test", max_retries=0)
    llm.chat.completions.create(
        model="m",
        messages=MESSAGES,
        seed=3,
        temperature=0.5,
        extra_body=extensions,
        extra_headers={"X-Note": f"{MARK}-header"},
    )


def test_capture_off_exports_no_vendor_extension_content(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(capture=frozenset()))
    _vendor_call(server)
    assert server.requests[0].body["documents"][0]["title"] == f"{MARK}-title"  # sent as is
    a = attrs(only_span(exporter))
    assert MARK not in json.dumps(a)
    # what configures the call is still there, extension parameters included
    expected = {"model": "m", "seed": 3, "temperature": 0.5, "top_k": 20}
    assert json.loads(a[sc.GT_LLM_REQUEST]) == expected
    assert json.loads(a[sc.OI_LLM_INVOCATION_PARAMETERS]) == expected


def test_capture_on_records_vendor_extensions_masked(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, redact=Redactor()))
    _vendor_call(server)
    a = attrs(only_span(exporter))
    request = json.loads(a[sc.GT_LLM_REQUEST])
    assert request["documents"] == [
        {"title": f"{MARK}-title", "text": f"{MARK}-doc [REDACTED:email]"}
    ]
    assert request[f"{MARK}-key"] == 1
    assert "bob@example.com" not in json.dumps(a)
    assert f"{MARK}-header" not in json.dumps(a)


def test_credentials_in_the_base_url_are_never_exported(
    exporter: InMemorySpanExporter, server: OpenAICompatServer, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(capture=frozenset(), redact=None))
    base = server.base_url.replace("http://", "http://svc:Lq9Zt2Wx@")
    _vendor_call(server, base_url=base)
    a = attrs(only_span(exporter))
    assert "Lq9Zt2Wx" not in json.dumps(a)
    assert a[sc.GT_LLM_BASE_URL] == server.base_url.replace("http://", "http://REDACTED:REDACTED@")
    assert a[sc.SERVER_ADDRESS] == "127.0.0.1"
