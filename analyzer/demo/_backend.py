"""Which model the demo talks to: an embedded model's server, the lexical reader, or a URL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx

from groundtrace.analyzer.backends import LEXICAL_MODEL, MODELS, LlamaServer
from groundtrace.analyzer.errors import BackendUnavailableError, ConfigError

__all__ = ["CONTEXT_TOKENS", "PROMPT_CACHE_BYTES", "Backend", "open_backend"]

#: Context window of the embedded model's server, in tokens (the app fits its prompts to it).
CONTEXT_TOKENS: Final = 2048

#: Model state the embedded server's prompt cache keeps: about 50 prompts of the demo's length
#: (~15 MB of state each, plus 37 MB of logits each at ``n_batch`` 64 -- 2.6 GB at most), so
#: the gate's top-2 prompts and the DUPLICATE replays restart from the app's saved prompts.
PROMPT_CACHE_BYTES: Final = 768 << 20


@dataclass(frozen=True, slots=True)
class Backend:
    """An OpenAI-compatible endpoint the app can call.

    Attributes:
        kind: ``embedded`` (a registry model served here), ``lexical`` or ``url``.
        model: model name sent in requests.
        base_url: the endpoint (the app's in-process pseudo URL for ``lexical``).
        log_path: the server's log file, when the demo started the server.
        context_tokens: the model's context window in tokens, when known (the embedded
            server's); the app fits each prompt to it.
    """

    kind: str
    model: str
    base_url: str
    log_path: Path | None = None
    context_tokens: int | None = None


def _first_model(base_url: str) -> str:
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=10.0)
        response.raise_for_status()
        models = response.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        raise BackendUnavailableError(
            f"cannot list models at {base_url}: {exc}; is the server running? "
            "(or use `--model lexical`)"
        ) from exc
    if not models or not isinstance(models[0], dict) or "id" not in models[0]:
        raise BackendUnavailableError(f"{base_url}/models lists no model")
    return str(models[0]["id"])


@contextlib.contextmanager
def open_backend(model: str) -> Iterator[Backend]:
    """Start (or reach) the model backend for the duration of the block.

    Args:
        model: an embedded model's registry name (:data:`~.backends.MODELS`, served by a local
            llama.cpp server started here), ``lexical`` (in-process extractive reader) or an
            ``http(s)://.../v1`` URL of an OpenAI-compatible server.

    Raises:
        BackendUnavailableError: the backend cannot be started or reached.
        ConfigError: ``model`` is none of the above.
    """
    if model == "lexical":
        from groundtrace.examples.hotpot_rag.app import LEXICAL_BASE_URL

        yield Backend("lexical", LEXICAL_MODEL, LEXICAL_BASE_URL)
    elif model in MODELS:
        with LlamaServer(
            model, n_ctx=CONTEXT_TOKENS, prompt_cache_bytes=PROMPT_CACHE_BYTES
        ) as server:
            yield Backend(
                "embedded", server.model, server.base_url, server.log_path, CONTEXT_TOKENS
            )
    elif model.startswith(("http://", "https://")):
        yield Backend("url", _first_model(model), model.rstrip("/"))
    else:
        raise ConfigError(
            f"unknown model {model!r}: use one of {', '.join(MODELS)}, lexical or an "
            "http(s):// URL",
            field="--model",
        )
