"""An instrumented BM25 RAG app over a HotpotQA sample (see ``app`` and ``cases``).

Usage::

    groundtrace demo --model lexical --questions 5 --out runs/demo
"""

__all__: list[str] = []
