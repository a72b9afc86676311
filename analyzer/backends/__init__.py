"""Local model backends behind OpenAI-compatible endpoints.

* the lexical extractive reader (:func:`lexical_client` in-process, :class:`LexicalServer` over
  HTTP): deterministic and fast, for tests and quick demos;
* the embedded GGUF models (:data:`MODELS`, default :data:`DEFAULT_MODEL`) through
  llama-cpp-python's server (:class:`LlamaServer`), the real local LLMs.

Usage::

    from groundtrace.analyzer.backends import DEFAULT_MODEL, LexicalServer, LlamaServer

    with LlamaServer(DEFAULT_MODEL) as server:  # needs the `llm` extra
        print(server.base_url, server.model)
"""

from __future__ import annotations

from ._lexical_server import LEXICAL_MODEL, LexicalServer, lexical_client, lexical_transport
from ._llama import LlamaServer
from ._models import DEFAULT_MODEL, MODELS, ModelSpec, assemble_model, model_cache_dir, model_spec

__all__ = [
    "DEFAULT_MODEL",
    "LEXICAL_MODEL",
    "MODELS",
    "LexicalServer",
    "LlamaServer",
    "ModelSpec",
    "assemble_model",
    "lexical_client",
    "lexical_transport",
    "model_cache_dir",
    "model_spec",
]
