"""Local model backends behind OpenAI-compatible endpoints.

* the lexical extractive reader (:func:`lexical_client` in-process, :class:`LexicalServer` over
  HTTP): deterministic and fast, for tests and quick demos;
* Gemma 3 270M through llama-cpp-python's server (:class:`LlamaServer`), the real local LLM.

Usage::

    from groundtrace.analyzer.backends import LexicalServer, LlamaServer, lexical_client

    client = lexical_client()  # openai.OpenAI answering with the lexical reader
    with LlamaServer() as server:  # needs the `llm` extra
        print(server.base_url, server.model)
"""

from __future__ import annotations

from ._lexical_server import LEXICAL_MODEL, LexicalServer, lexical_client, lexical_transport
from ._llama import GEMMA_MODEL_ALIAS, LlamaServer, gemma_model_path

__all__ = [
    "GEMMA_MODEL_ALIAS",
    "LEXICAL_MODEL",
    "LexicalServer",
    "LlamaServer",
    "gemma_model_path",
    "lexical_client",
    "lexical_transport",
]
