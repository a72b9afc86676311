"""A new user's RAG app of a domain the repository does not otherwise hold: a greenhouse
growing handbook, written from the docs' formats alone.

* :mod:`.handbook` -- the handbook's pages (chunk ids ``gh-01``... are the gold), the cases
  (docs/cases.md layout, ids as gold) and a small audit corpus of the same domain (three
  growers' guides, one contradiction planted);
* :mod:`.model_server` -- the app's own model: a tiny deterministic extractive reader behind
  an OpenAI-compatible HTTP server on 127.0.0.1;
* :mod:`.app` -- the app: BM25 (rank_bm25) retrieval, the ``openai`` client, the SDK's
  decorators, prompt and answer format as the quick start shows; ``--version 2`` plants a
  retrieval regression (the ranking sorted the wrong way round).
"""
