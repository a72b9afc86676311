"""Life cycle of one LLM span: start with the request, end with the output or the failure."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Tracer

from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import (
    Content,
    Recorder,
    active_settings,
    logger,
    record_failure,
)

from ._request import PROVIDER, endpoint_attrs, request_attrs, sent_request
from ._response import Output, output_attrs

__all__ = ["LLMCall"]

_CAPTURE_MESSAGES: Final = Content.MESSAGES

_BASE_ATTRS: dict[str, Any] = {
    sc.GT_ACTION: sc.Action.LLM.value,
    sc.OI_SPAN_KIND: sc.OpenInferenceSpanKind.LLM.value,
    sc.GENAI_OPERATION_NAME: sc.GenAIOperation.CHAT.value,
    sc.OI_LLM_PROVIDER: PROVIDER,
    sc.OI_LLM_SYSTEM: PROVIDER,
}
#: The attributes every LLM span starts with, for each GenAI attribute set.
_STATIC_ATTRS: dict[sc.GenAIConventions, dict[str, Any]] = {
    sc.GenAIConventions.LATEST: _BASE_ATTRS | {sc.GENAI_PROVIDER_NAME: PROVIDER},
    sc.GenAIConventions.PREVIOUS: _BASE_ATTRS | {sc.GENAI_SYSTEM: PROVIDER},
    sc.GenAIConventions.BOTH: _BASE_ATTRS
    | {sc.GENAI_PROVIDER_NAME: PROVIDER, sc.GENAI_SYSTEM: PROVIDER},
}


class LLMCall:
    """One traced OpenAI call. :meth:`end` is idempotent and never raises."""

    __slots__ = ("capture", "ended", "rec", "span", "started", "token")

    def __init__(self, span: Span, rec: Recorder, capture: bool) -> None:
        self.span = span
        self.rec = rec
        self.capture = capture
        self.ended = False
        self.token: object | None = None
        #: ``time.monotonic()`` when the request is issued (set as :meth:`start` returns)
        self.started = time.monotonic()

    @classmethod
    def start(
        cls,
        tracer_of: Callable[[], Tracer],
        api: str,
        client: Any,
        kwargs: dict[str, Any],
        sentinels: tuple[type, ...],
    ) -> LLMCall | None:
        """Start the span of a call, or ``None`` when the call should run untraced.

        Untraced means: groundtrace disabled, instrumentation suppressed, span not recording,
        or the request could not be read (the call then simply runs).
        """
        current = active_settings()
        if current is None:
            return None
        try:
            req = sent_request(kwargs, sentinels)
            model = req.get("model")
            span = tracer_of().start_span(
                f"{sc.GenAIOperation.CHAT.value} {model}" if isinstance(model, str) else "chat",
                kind=SpanKind.CLIENT,
            )
            if not span.is_recording():
                span.end()
                return None
        except Exception:
            logger.debug("openai request not traced", exc_info=True)
            return None
        rec = Recorder(current)
        capture = current.captures(_CAPTURE_MESSAGES)
        call = cls(span, rec, capture)
        try:
            attrs = rec.attrs
            attrs.update(_STATIC_ATTRS[current.genai])
            attrs[sc.GT_LLM_API] = api
            attrs.update(endpoint_attrs(getattr(client, "base_url", None)))
            attrs.update(request_attrs(api, req, rec, capture))
            if current.genai_latest:
                attrs[sc.OPENAI_API_TYPE] = sc.LLM_API_TO_OPENAI_TYPE[sc.LLMApi(api)].value
        except Exception:
            logger.debug("openai request attributes incomplete", exc_info=True)
        call.token = otel_context.attach(trace.set_span_in_context(span))
        call.started = time.monotonic()  # the wrapper issues the request next
        return call

    def first_chunk(self) -> None:
        """Note the arrival of a stream's first chunk: ``gen_ai.response.time_to_first_chunk``
        (current set), in seconds since the request was issued. Never raises."""
        try:
            if self.rec.settings.genai_latest:
                elapsed = time.monotonic() - self.started
                self.rec.attrs[sc.GENAI_RESPONSE_TIME_TO_FIRST_CHUNK] = elapsed
        except Exception:
            logger.debug("time to first chunk not recorded", exc_info=True)

    def detach(self) -> None:
        """Leave the span's context (the span itself may stay open for a stream)."""
        token = self.token
        if token is not None:
            self.token = None
            try:
                otel_context.detach(token)  # type: ignore[arg-type]
            except Exception:
                logger.debug("context detach failed", exc_info=True)

    def end(
        self,
        output: Output | None = None,
        exc: BaseException | None = None,
        *,
        incomplete: bool = False,
    ) -> None:
        """Write the output attributes (if any), record a failure (if any) and end the span."""
        if self.ended:
            return
        self.ended = True
        span = self.span
        try:
            rec = self.rec
            if output is not None:
                rec.attrs.update(output_attrs(output, rec, self.capture))
            if incomplete:
                rec.attrs[sc.GT_LLM_STREAM_INCOMPLETE] = True
            record_failure(span, rec, exc)
            span.set_attributes(rec.final())
        except Exception:
            logger.debug("openai response attributes incomplete", exc_info=True)
        finally:
            span.end()
