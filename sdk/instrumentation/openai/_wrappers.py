"""The wrapt wrappers put around ``create`` (chat completions and responses, sync and async).

The sync and async wrappers share everything but the ``await``: the span is started by
:meth:`LLMCall.start`, the result is handed to :func:`_finish`, a failure to
:meth:`LLMCall.end`. The application always gets exactly the return value or exception the
unpatched call produces.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry.trace import Tracer

from groundtrace.sdk.instrumentation import Wrapper, logger

from ._request import API_CHAT
from ._response import Output, output_from_chat, output_from_response
from ._span import LLMCall
from ._stream import AsyncStreamProxy, ChatAccumulator, ResponsesAccumulator, SyncStreamProxy

__all__ = ["OpenAITypes", "async_wrapper", "sync_wrapper"]


class OpenAITypes:
    """The ``openai`` classes the wrappers test results against (imported once, lazily)."""

    __slots__ = ("async_stream", "chat_completion", "response", "sentinels", "stream")

    def __init__(self) -> None:
        import openai
        from openai.types.chat import ChatCompletion
        from openai.types.responses import Response

        self.sentinels: tuple[type, ...] = (openai.Omit, openai.NotGiven)
        self.stream: type = openai.Stream
        self.async_stream: type = openai.AsyncStream
        self.chat_completion: type = ChatCompletion
        self.response: type = Response


def _client_of(instance: Any) -> Any:
    return getattr(instance, "_client", None)


def _output_of(api: str, result: Any, types: OpenAITypes) -> Output | None:
    try:
        if api == API_CHAT:
            if isinstance(result, types.chat_completion):
                return output_from_chat(result)
        elif isinstance(result, types.response):
            return output_from_response(result)
    except Exception:
        logger.debug("openai response not understood", exc_info=True)
    return None  # e.g. a raw response (with_raw_response): the request side is still traced


def _finish(call: LLMCall, api: str, result: Any, types: OpenAITypes) -> Any:
    """End the span for a returned result, or hand it to a stream proxy that will."""
    try:
        if isinstance(result, types.stream):
            acc = ChatAccumulator() if api == API_CHAT else ResponsesAccumulator()
            return SyncStreamProxy(result, call, acc)
        if isinstance(result, types.async_stream):
            acc = ChatAccumulator() if api == API_CHAT else ResponsesAccumulator()
            return AsyncStreamProxy(result, call, acc)
    except Exception:
        logger.debug("stream proxy failed; returning the stream untraced", exc_info=True)
        call.end(incomplete=True)
        return result
    call.end(_output_of(api, result, types))
    return result


def sync_wrapper(api: str, tracer_of: Callable[[], Tracer], types: OpenAITypes) -> Wrapper:
    """The wrapt wrapper for a synchronous ``create``."""

    def wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        call = LLMCall.start(tracer_of, api, _client_of(instance), kwargs, types.sentinels)
        if call is None:
            return wrapped(*args, **kwargs)
        done = False
        try:
            result = wrapped(*args, **kwargs)
            done = True
        finally:
            call.detach()
            if not done:  # the app's exception propagates unchanged
                call.end(exc=sys.exc_info()[1])
        return _finish(call, api, result, types)

    return wrapper


def async_wrapper(api: str, tracer_of: Callable[[], Tracer], types: OpenAITypes) -> Wrapper:
    """The wrapt wrapper for an asynchronous ``create``."""

    def wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        return _run(wrapped, instance, args, kwargs)

    async def _run(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        call = LLMCall.start(tracer_of, api, _client_of(instance), kwargs, types.sentinels)
        if call is None:
            return await wrapped(*args, **kwargs)
        done = False
        try:
            result = await wrapped(*args, **kwargs)
            done = True
        finally:
            call.detach()
            if not done:  # the app's exception propagates unchanged
                call.end(exc=sys.exc_info()[1])
        return _finish(call, api, result, types)

    return wrapper
