"""Request-side attributes of an OpenAI call, as small ``(key, value)`` generators."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Final

from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import AttributeValue, Recorder

from ._messages import (
    Message,
    chat_message,
    flat_message_attrs,
    genai_messages,
    genai_system_instructions,
    responses_input_messages,
)

__all__ = [
    "API_CHAT",
    "API_RESPONSES",
    "endpoint_attrs",
    "request_attrs",
    "sent_request",
]

#: ``groundtrace.llm.api`` values.
API_CHAT: Final = sc.LLMApi.CHAT_COMPLETIONS.value
API_RESPONSES: Final = sc.LLMApi.RESPONSES.value

PROVIDER: Final = "openai"

#: keyword arguments of ``create`` that shape the HTTP request but are not part of the body.
_TRANSPORT_ARGS: Final = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
#: The request keys recorded when capture is off (in the request JSON and the invocation
#: parameters): the model and the parameters that configure the call, whose values the app
#: chose. Everything else is left out: the content keys (messages, input, instructions, a
#: prompt template, a predicted output, the caller's free-form metadata) and any key this
#: list does not know, such as what ``extra_body`` adds (a vLLM ``documents`` list, a
#: vendor's ``chat_template_kwargs``...), whose values may be user content.
_CONFIG_KEYS: Final = frozenset(
    {
        *("model", "stream", "stream_options", "n", "seed", "stop", "user", "store"),
        *("temperature", "top_p", "top_k", "min_p", "frequency_penalty", "presence_penalty"),
        *("repetition_penalty", "logit_bias", "logprobs", "top_logprobs"),
        *("max_tokens", "max_completion_tokens", "max_output_tokens", "max_tool_calls"),
        *("response_format", "text", "tools", "tool_choice", "parallel_tool_calls"),
        *("functions", "function_call", "reasoning", "reasoning_effort", "verbosity"),
        *("service_tier", "modalities", "truncation", "include", "background"),
    }
)
#: request keys that are not invocation parameters.
_NOT_PARAMS: Final = frozenset({"messages", "input", "instructions", "tools", "functions"})
_OUTPUT_TYPES: Final = {"json_object": "json", "json_schema": "json", "text": "text"}


def sent_request(kwargs: dict[str, Any], sentinels: tuple[type, ...]) -> dict[str, Any]:
    """The request body exactly as the client sends it: unset arguments dropped, ``extra_body``
    merged in. A one-shot iterable of messages is materialised in ``kwargs`` so that the
    call and the span see the same list.
    """
    body: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in _TRANSPORT_ARGS or isinstance(value, sentinels):
            continue
        if key in ("messages", "input", "tools") and not isinstance(
            value, str | list | tuple | Mapping
        ):
            kwargs[key] = list(value)
        body[key] = kwargs[key]
    extra = kwargs.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


@lru_cache(maxsize=64)
def _endpoint(url: str) -> tuple[str, str | None, int | None]:
    """The URL without credentials, its host and its port. Userinfo becomes
    ``REDACTED:REDACTED@``, as the OpenTelemetry conventions ask of ``url.full``: the base
    URL is configuration, exported whatever the capture and redaction settings."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" in parts.netloc:
        netloc = "REDACTED:REDACTED@" + parts.netloc.rpartition("@")[2]
        url = urlunsplit(parts._replace(netloc=netloc))
    port = parts.port
    if port is None and parts.scheme in ("http", "https"):
        port = 443 if parts.scheme == "https" else 80
    return url.rstrip("/"), parts.hostname, port


def endpoint_attrs(base_url: Any) -> Iterator[tuple[str, AttributeValue]]:
    """``groundtrace.llm.base_url``, ``server.address`` and ``server.port`` of a client."""
    if base_url is None:
        return
    url, host, port = _endpoint(str(base_url))
    yield sc.GT_LLM_BASE_URL, url
    if host:
        yield sc.SERVER_ADDRESS, host
    if port is not None:
        yield sc.SERVER_PORT, port


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _genai_param_attrs(api: str, req: dict[str, Any]) -> Iterator[tuple[str, AttributeValue]]:
    for key, attr in (
        ("temperature", sc.GENAI_REQUEST_TEMPERATURE),
        ("top_p", sc.GENAI_REQUEST_TOP_P),
        ("frequency_penalty", sc.GENAI_REQUEST_FREQUENCY_PENALTY),
        ("presence_penalty", sc.GENAI_REQUEST_PRESENCE_PENALTY),
        ("top_k", sc.GENAI_REQUEST_TOP_K),  # not OpenAI's; compatible servers take it
    ):
        number = _number(req.get(key))
        if number is not None:
            yield attr, number
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        limit = req.get(key)
        if isinstance(limit, int) and not isinstance(limit, bool):
            yield sc.GENAI_REQUEST_MAX_TOKENS, limit
            break
    seed = req.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        yield sc.GENAI_REQUEST_SEED, seed
    n = req.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n != 1:
        yield sc.GENAI_REQUEST_CHOICE_COUNT, n
    stop = req.get("stop")
    if isinstance(stop, str):
        yield sc.GENAI_REQUEST_STOP_SEQUENCES, [stop]
    elif isinstance(stop, list | tuple) and all(isinstance(s, str) for s in stop):
        yield sc.GENAI_REQUEST_STOP_SEQUENCES, list(stop)
    fmt = req.get("response_format") if api == API_CHAT else _text_format(req.get("text"))
    kind = fmt.get("type") if isinstance(fmt, Mapping) else getattr(fmt, "type", None)
    if isinstance(kind, str):
        yield sc.GENAI_OUTPUT_TYPE, _OUTPUT_TYPES.get(kind, kind)


def _text_format(text: Any) -> Any:
    return text.get("format") if isinstance(text, Mapping) else None


def _tool_attrs(req: dict[str, Any], rec: Recorder) -> Iterator[tuple[str, AttributeValue]]:
    tools = req.get("tools")
    if not isinstance(tools, list | tuple):
        return
    for i, tool in enumerate(tools):
        key = sc.indexed(sc.OI_LLM_TOOLS, i, sc.OI_TOOL_JSON_SCHEMA)
        yield key, rec.json(key, tool)


def _tool_definition(tool: Any) -> Any:
    """A tool offered, in the GenAI tool-definitions layout (``{type, name, description,
    parameters}``; chat completions nests all but the type under ``function``)."""
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping):
            return {"type": tool.get("type", "function"), **function}
    return tool


def _genai_content(
    api: str, req: dict[str, Any], messages: list[Message], rec: Recorder
) -> Iterator[tuple[str, AttributeValue]]:
    """The current GenAI content attributes: system instructions given apart from the chat
    history (Responses ``instructions``), the input messages and the tool definitions."""
    history = messages
    instructions = req.get("instructions")
    if api == API_RESPONSES and isinstance(instructions, str):
        system = genai_system_instructions(instructions)
        yield (
            sc.GENAI_SYSTEM_INSTRUCTIONS,
            rec.json(sc.GENAI_SYSTEM_INSTRUCTIONS, system),
        )
        history = messages[1:]  # the instructions lead the messages as a system message
    yield (
        sc.GENAI_INPUT_MESSAGES,
        rec.json(sc.GENAI_INPUT_MESSAGES, genai_messages(history)),
    )
    tools = req.get("tools")
    if isinstance(tools, list | tuple) and tools:
        definitions = [_tool_definition(t) for t in tools]
        yield sc.GENAI_TOOL_DEFINITIONS, rec.json(sc.GENAI_TOOL_DEFINITIONS, definitions)


def input_messages(api: str, req: dict[str, Any]) -> list[Message]:
    """The request's input as normalised messages."""
    if api == API_CHAT:
        messages = req.get("messages")
        return [chat_message(m) for m in messages] if isinstance(messages, list | tuple) else []
    return responses_input_messages(req.get("instructions"), req.get("input"))


def request_attrs(
    api: str, req: dict[str, Any], rec: Recorder, capture: bool
) -> Iterator[tuple[str, AttributeValue]]:
    """All request-side attributes of one call (model, parameters, messages, tools).

    Args:
        api: :data:`API_CHAT` or :data:`API_RESPONSES`.
        req: the request body from :func:`sent_request`.
        rec: recorder that masks and clips text.
        capture: whether message content is captured.
    """
    model = req.get("model")
    if isinstance(model, str):
        yield sc.GENAI_REQUEST_MODEL, model
        yield sc.OI_LLM_MODEL_NAME, model
    stream = req.get("stream") is True
    yield sc.GT_LLM_STREAM, stream
    if stream and rec.settings.genai_latest:
        yield sc.GENAI_REQUEST_STREAM, True
    tier = req.get("service_tier")
    if isinstance(tier, str) and tier != "auto" and rec.settings.genai_latest:
        yield sc.OPENAI_REQUEST_SERVICE_TIER, tier
    yield from _genai_param_attrs(api, req)
    shown = req if capture else {k: v for k, v in req.items() if k in _CONFIG_KEYS}
    params = {k: v for k, v in shown.items() if k not in _NOT_PARAMS}
    key = sc.OI_LLM_INVOCATION_PARAMETERS
    yield key, rec.json(key, params)
    yield from _tool_attrs(req, rec)
    if capture:
        body = rec.json(sc.GT_LLM_REQUEST, req)
        messages = input_messages(api, req)
        yield from flat_message_attrs(sc.OI_LLM_INPUT_MESSAGES, messages, rec)
        if rec.settings.genai_latest:
            yield from _genai_content(api, req, messages, rec)
    else:
        body = rec.json(sc.GT_LLM_REQUEST, shown)
    yield sc.GT_LLM_REQUEST, body
    yield sc.OI_INPUT_VALUE, body
    yield sc.OI_INPUT_MIME_TYPE, "application/json"
    yield sc.GT_CONTENT_CAPTURED, capture
