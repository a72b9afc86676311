"""Stream proxies: the application iterates the real stream; the span follows along.

:class:`SyncStreamProxy` / :class:`AsyncStreamProxy` are wrapt ``ObjectProxy`` objects around
``openai.Stream`` / ``openai.AsyncStream``. They never read ahead: each chunk is handed to
the application as it arrives and folded into an accumulator on the way. The span ends
exactly once, when the stream is exhausted, closed (``close()`` or context-manager exit),
fails mid-way, or is garbage-collected while abandoned (a ``weakref.finalize`` hook).
All proxy state lives in ``_self_*`` attributes.
"""

from __future__ import annotations

import weakref
from types import TracebackType
from typing import Any, Protocol

from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFailedEvent,
    ResponseIncompleteEvent,
    ResponseTextDeltaEvent,
)
from wrapt import ObjectProxy

from groundtrace.sdk.instrumentation import logger

from ._messages import Message, ToolCall
from ._response import Output, output_from_response
from ._span import LLMCall

_FINAL_EVENTS = (ResponseCompletedEvent, ResponseIncompleteEvent, ResponseFailedEvent)

__all__ = [
    "Accumulator",
    "AsyncStreamProxy",
    "ChatAccumulator",
    "ResponsesAccumulator",
    "SyncStreamProxy",
]


class Accumulator(Protocol):
    """Folds stream items into an :class:`Output`."""

    def feed(self, item: Any) -> None:
        """Take one stream item into account (must not raise)."""

    def output(self) -> Output:
        """What has been received so far."""
        ...


class _Choice:
    __slots__ = ("calls", "finish", "role", "texts")

    def __init__(self) -> None:
        self.role: str | None = None
        self.texts: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument pieces]]
        self.finish: str | None = None


class ChatAccumulator:
    """Aggregates ``ChatCompletionChunk`` objects: content, tool-call deltas, usage."""

    __slots__ = ("choices", "fingerprint", "id", "model", "tier", "usage")

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Any = None
        self.tier: Any = None
        self.fingerprint: Any = None
        self.choices: dict[int, _Choice] = {}

    def feed(self, item: Any) -> None:
        """Fold one chunk in."""
        try:
            if self.id is None:
                self.id = getattr(item, "id", None)
                self.model = getattr(item, "model", None)
            usage = getattr(item, "usage", None)
            if usage is not None:
                self.usage = usage
            tier = getattr(item, "service_tier", None)
            if tier is not None:
                self.tier = tier
            fingerprint = getattr(item, "system_fingerprint", None)
            if fingerprint is not None:
                self.fingerprint = fingerprint
            for choice in getattr(item, "choices", None) or ():
                self._feed_choice(choice)
        except Exception:
            logger.debug("stream chunk not understood", exc_info=True)

    def _feed_choice(self, choice: Any) -> None:
        index = getattr(choice, "index", 0) or 0
        acc = self.choices.get(index)
        if acc is None:
            acc = self.choices[index] = _Choice()
        delta = getattr(choice, "delta", None)
        if delta is not None:
            role = getattr(delta, "role", None)
            if role:
                acc.role = role
            content = getattr(delta, "content", None)
            if content:
                acc.texts.append(content)
            for tc in getattr(delta, "tool_calls", None) or ():
                slot = acc.calls.get(tc.index)
                if slot is None:
                    slot = acc.calls[tc.index] = [None, None, []]
                if getattr(tc, "id", None):
                    slot[0] = tc.id
                function = getattr(tc, "function", None)
                if function is not None:
                    if getattr(function, "name", None):
                        slot[1] = function.name
                    if getattr(function, "arguments", None):
                        slot[2].append(function.arguments)
        finish = getattr(choice, "finish_reason", None)
        if finish:
            acc.finish = finish

    def output(self) -> Output:
        """The aggregate so far."""
        out = Output(id=self.id, model=self.model)
        for index in sorted(self.choices):
            acc = self.choices[index]
            calls = [
                ToolCall(id=slot[0], name=slot[1], arguments="".join(slot[2]))
                for _, slot in sorted(acc.calls.items())
            ]
            out.messages.append(
                Message(
                    role=acc.role or "assistant",
                    content="".join(acc.texts) if acc.texts or not calls else None,
                    tool_calls=calls,
                    finish_reason=acc.finish,
                )
            )
        out.set_usage(self.usage, "prompt_tokens", "completion_tokens")
        out.set_service({"service_tier": self.tier, "system_fingerprint": self.fingerprint})
        return out


class ResponsesAccumulator:
    """Aggregates responses-API stream events (text deltas; the final response if sent)."""

    __slots__ = ("final", "id", "model", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.final: Any = None
        self.id: str | None = None
        self.model: str | None = None

    def feed(self, item: Any) -> None:
        """Fold one event in."""
        try:
            if isinstance(item, ResponseTextDeltaEvent):
                self.texts.append(item.delta)
            elif isinstance(item, _FINAL_EVENTS):
                self.final = item.response
            elif isinstance(item, ResponseCreatedEvent):
                self.id = getattr(item.response, "id", None)
                self.model = getattr(item.response, "model", None)
        except Exception:
            logger.debug("stream event not understood", exc_info=True)

    def output(self) -> Output:
        """The final response when it arrived, else the text received so far."""
        if self.final is not None:
            return output_from_response(self.final)
        out = Output(id=self.id, model=self.model)
        out.messages.append(Message(role="assistant", content="".join(self.texts)))
        return out


def _abandoned(call: LLMCall, acc: Accumulator) -> None:
    """Finalizer of a proxy collected before its stream ended: end the span with what arrived."""
    if not call.ended:
        call.end(_safe_output(acc), incomplete=True)


def _safe_output(acc: Accumulator) -> Output | None:
    try:
        return acc.output()
    except Exception:
        logger.debug("stream aggregate failed", exc_info=True)
        return None


class _StreamProxyBase(ObjectProxy[Any]):
    def __init__(self, stream: Any, call: LLMCall, acc: Accumulator) -> None:
        super().__init__(stream)
        self._self_call = call
        self._self_acc = acc
        self._self_first = True  # no chunk received yet
        self._self_finalizer = weakref.finalize(self, _abandoned, call, acc)

    def _self_end(self, exc: BaseException | None = None, *, complete: bool = False) -> None:
        call: LLMCall = self._self_call
        if call.ended:
            return
        self._self_finalizer.detach()
        call.end(_safe_output(self._self_acc), exc, incomplete=not complete)


class SyncStreamProxy(_StreamProxyBase):
    """Proxy of an ``openai.Stream``."""

    def __iter__(self) -> SyncStreamProxy:
        return self

    def __next__(self) -> Any:
        try:
            item = self.__wrapped__.__next__()
        except StopIteration:
            self._self_end(complete=True)
            raise
        except Exception as exc:
            self._self_end(exc)
            raise
        if self._self_first:
            self._self_first = False
            self._self_call.first_chunk()
        self._self_acc.feed(item)
        return item

    def close(self) -> None:
        """Close the stream and end the span (partial output when not exhausted)."""
        try:
            self.__wrapped__.close()
        finally:
            self._self_end()

    def __enter__(self) -> SyncStreamProxy:
        self.__wrapped__.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.__wrapped__.__exit__(exc_type, exc, tb)
        finally:
            self._self_end()


class AsyncStreamProxy(_StreamProxyBase):
    """Proxy of an ``openai.AsyncStream``."""

    def __aiter__(self) -> AsyncStreamProxy:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self.__wrapped__.__anext__()
        except StopAsyncIteration:
            self._self_end(complete=True)
            raise
        except Exception as exc:
            self._self_end(exc)
            raise
        if self._self_first:
            self._self_first = False
            self._self_call.first_chunk()
        self._self_acc.feed(item)
        return item

    async def close(self) -> None:
        """Close the stream and end the span (partial output when not exhausted)."""
        try:
            await self.__wrapped__.close()
        finally:
            self._self_end()

    async def __aenter__(self) -> AsyncStreamProxy:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.__wrapped__.__aexit__(exc_type, exc, tb)
        finally:
            self._self_end()
