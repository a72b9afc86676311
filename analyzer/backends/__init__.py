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

from typing import TYPE_CHECKING

from groundtrace.analyzer._deprecation import imported_on_use, renamed

from ._models import DEFAULT_MODEL, MODELS, ModelSpec

if TYPE_CHECKING:
    from ._lexical_server import LEXICAL_MODEL, LexicalServer, lexical_client
    from ._llama import LlamaServer

__all__ = [
    "DEFAULT_MODEL",
    "LEXICAL_MODEL",
    "MODELS",
    "LexicalServer",
    "LlamaServer",
    "ModelSpec",
    "lexical_client",
]

#: How a model file is found and assembled, and the reader's transport, no longer public
#: (0.2.0): importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "assemble_model": f"{__name__}._models.assemble_model",
        "lexical_transport": f"{__name__}._lexical_server.lexical_transport",
        "model_cache_dir": f"{__name__}._models.model_cache_dir",
        "model_spec": f"{__name__}._models.model_spec",
    },
    since="0.2.0",
    remove_in="0.3.0",
    # the servers on first use: the model table (the attribution's help names its default)
    # loads no HTTP client
    fallback=imported_on_use(
        __name__,
        {"._lexical_server": ("LEXICAL_MODEL", "LexicalServer", "lexical_client"),
         "._llama": ("LlamaServer",)},
    ),
)  # fmt: skip
