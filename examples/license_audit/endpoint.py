"""The model answerer of the licence audit: the audit's own endpoint answerer.

Kept as an import path of this example; the answerer (its prompt names no domain) lives in
:mod:`groundtrace.analyzer.audit`.

Usage::

    client = ModelClient("http://127.0.0.1:8080/v1", cache=CallCache("runs/a/llm_cache.sqlite"))
    answerer = EndpointAnswerer(client, "gemma-3-270m")
"""

from __future__ import annotations

from groundtrace.analyzer.audit import EndpointAnswerer

__all__ = ["EndpointAnswerer"]
