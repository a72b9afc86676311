"""Auto-instrumentation of ``rank_bm25``: ``get_top_n`` / ``get_scores`` become RETRIEVE spans.

``BM25.get_top_n`` (the base class, so ``BM25Okapi``, ``BM25L`` and ``BM25Plus`` alike) and
the ``get_scores`` of every ``BM25`` subclass defined in ``rank_bm25`` are patched. A span
records the retriever (the class name), ``k`` (``n``), the query tokens, and the ranked
documents with their corpus index as id, rank, BM25 score and content (the document as
passed; token lists joined with spaces). ``get_scores`` records the top
``max_evidence_items`` ranks only. One span per user call: ``get_top_n`` does not open a
nested span for the ``get_scores`` it calls.

Usage::

    from rank_bm25 import BM25Okapi
    from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor

    RankBM25Instrumentor().instrument(tracer_provider=provider)  # provider optional
    bm25 = BM25Okapi([doc.split() for doc in corpus])
    bm25.get_top_n("who directed jaws".split(), corpus, n=5)  # one RETRIEVE span
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from groundtrace.sdk.instrumentation import Layers, tracer_source

__all__ = ["RankBM25Instrumentor"]

_MODULE: Final = "rank_bm25"
_INSTRUMENTS: Final = ("rank-bm25 >= 0.2",)
_LAYERS: Final = Layers()


def _scoring_classes(module: Any) -> list[type]:
    """``BM25`` subclasses of the module that define their own ``get_scores``."""
    base = module.BM25
    found: list[type] = []
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and value is not base
            and issubclass(value, base)
            and "get_scores" in vars(value)
        ):
            found.append(value)
    return found


class RankBM25Instrumentor(BaseInstrumentor):  # type: ignore[misc]
    """OpenTelemetry instrumentor for ``rank_bm25``.

    ``instrument(tracer_provider=...)`` uses that provider; without it, spans go to the
    provider groundtrace was configured with (or the global one), looked up per call.
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """Packages (with version ranges) this instrumentor applies to."""
        return _INSTRUMENTS

    def _instrument(self, **kwargs: Any) -> None:
        import importlib

        from ._wrappers import get_scores_wrapper, get_top_n_wrapper

        module = importlib.import_module(_MODULE)
        tracer_of = tracer_source(kwargs.get("tracer_provider"))
        _LAYERS.wrap(module.BM25, "get_top_n", get_top_n_wrapper(tracer_of))
        scores = get_scores_wrapper(tracer_of)
        for cls in _scoring_classes(module):
            _LAYERS.wrap(cls, "get_scores", scores)

    def _uninstrument(self, **kwargs: Any) -> None:
        _LAYERS.unwrap()  # only groundtrace's layers; other tools' stay where they are
