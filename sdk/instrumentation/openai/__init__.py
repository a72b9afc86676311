"""Auto-instrumentation of the ``openai`` client (v1 and later).

Patches ``chat.completions.create`` and ``responses.create``, sync and async. Each call
becomes an LLM span carrying groundtrace's lossless request (for replay), the OpenInference
``llm.*`` attributes and the OpenTelemetry GenAI ``gen_ai.*`` attributes. Streams are
proxied, never read ahead; their span ends when the stream is exhausted, closed, breaks
off, or is abandoned and garbage-collected. Works against any OpenAI-compatible base URL.

Usage::

    import openai
    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)  # provider optional
    client = openai.OpenAI(base_url="http://127.0.0.1:8080/v1", api_key="local")
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    OpenAIInstrumentor().uninstrument()  # only groundtrace's layer is taken off
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from groundtrace.sdk.instrumentation import Layers, tracer_source

__all__ = ["OpenAIInstrumentor"]

_CHAT_MODULE: Final = "openai.resources.chat.completions.completions"
_RESPONSES_MODULE: Final = "openai.resources.responses.responses"
#: (module, class, api, is_async) of every patched ``create``.
_PATCHES: Final = (
    (_CHAT_MODULE, "Completions", "chat.completions", False),
    (_CHAT_MODULE, "AsyncCompletions", "chat.completions", True),
    (_RESPONSES_MODULE, "Responses", "responses", False),
    (_RESPONSES_MODULE, "AsyncResponses", "responses", True),
)
_INSTRUMENTS: Final = ("openai >= 1.0",)
_LAYERS: Final = Layers()


class OpenAIInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """OpenTelemetry instrumentor for the ``openai`` client.

    ``instrument(tracer_provider=...)`` uses that provider; without it, spans go to the
    provider groundtrace was configured with (or the global one), looked up per call.
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """Packages (with version ranges) this instrumentor applies to."""
        return _INSTRUMENTS

    def _instrument(self, **kwargs: Any) -> None:
        import importlib

        from ._wrappers import OpenAITypes, async_wrapper, sync_wrapper

        tracer_of = tracer_source(kwargs.get("tracer_provider"))
        types = OpenAITypes()
        for module_name, cls_name, api, is_async in _PATCHES:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue  # an older openai without this API
            cls = getattr(module, cls_name, None)
            if cls is None or "create" not in vars(cls):
                continue
            make = async_wrapper if is_async else sync_wrapper
            _LAYERS.wrap(cls, "create", make(api, tracer_of, types))

    def _uninstrument(self, **kwargs: Any) -> None:
        _LAYERS.unwrap()  # only groundtrace's layers; other tools' stay where they are
