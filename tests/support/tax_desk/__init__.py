"""A user's own stack in a domain the repository holds nothing else of: a freelancers' tax
help desk, written from docs/quickstart.md, docs/attribution.md and docs/attributes.md alone.

* :mod:`.rules` -- the knowledge base (seven rule pages; their ids are the gold) and the
  questions;
* :mod:`.rag_app` -- a RAG app instrumented with the SDK as the quick start shows (keyword
  retrieval, the standard prompt, the ``openai`` client, ``@answer(replayable=True)``);
* :mod:`.agent` -- an agent with tools instrumented ONLY with OpenInference attribute
  conventions on the OpenTelemetry SDK (no groundtrace import), exporting OTLP/HTTP to
  ``groundtrace collect serve`` as docs/ci.md shows.
"""
