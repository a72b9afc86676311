"""RankBM25Instrumentor: RETRIEVE spans for get_top_n / get_scores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import rank_bm25
from opentelemetry.instrumentation.utils import suppress_instrumentation, unwrap
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from wrapt import wrap_function_wrapper

from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor

CORPUS = [
    "Jaws is a 1975 American thriller film directed by Steven Spielberg",
    "The shark in Jaws was nicknamed Bruce by the production crew",
    "Spielberg also directed Jurassic Park in 1993",
    "Sharks are a group of elasmobranch fish",
    "The cat sat on the mat",
    "Paris is the capital of France",
]
TOKENS = [doc.lower().split() for doc in CORPUS]
QUERY = "who directed jaws".split()


pytestmark = pytest.mark.usefixtures("capture_everything")


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    inst = RankBM25Instrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        yield exp
    finally:
        inst.uninstrument()
        provider.shutdown()


def only_span(exp: InMemorySpanExporter) -> ReadableSpan:
    spans = exp.get_finished_spans()
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def plain_top_n(bm25: Any, query: list[str], docs: list[Any], n: int) -> list[Any]:
    with suppress_instrumentation():
        return list(bm25.get_top_n(query, docs, n=n))


@pytest.mark.parametrize("cls", [rank_bm25.BM25Okapi, rank_bm25.BM25Plus, rank_bm25.BM25L])
def test_get_top_n_is_one_retrieve_span(exporter: InMemorySpanExporter, cls: type) -> None:
    bm25 = cls(TOKENS)
    top = bm25.get_top_n(QUERY, CORPUS, n=3)
    assert top == plain_top_n(bm25, QUERY, CORPUS, 3)  # unchanged for the app
    span = only_span(exporter)  # no nested span for the inner get_scores
    a = attrs(span)
    assert span.name == f"retrieval {cls.__name__}"
    assert a[sc.GT_ACTION] == sc.Action.RETRIEVE
    assert a[sc.OI_SPAN_KIND] == "RETRIEVER"
    assert a[sc.GENAI_OPERATION_NAME] == "retrieval"
    assert a[sc.GT_RETRIEVAL_RETRIEVER] == cls.__name__
    assert a[sc.GT_RETRIEVAL_K] == 3
    assert a[sc.GENAI_REQUEST_TOP_K] == 3
    assert a[sc.GT_RETRIEVAL_QUERY] == "who directed jaws"
    assert a[sc.GT_EVIDENCE_COUNT] == 3
    evidence = json.loads(a[sc.GT_EVIDENCE])
    with suppress_instrumentation():
        scores = bm25.get_scores(QUERY)
    expected_ids = [str(i) for i in np.argsort(scores)[::-1][:3]]
    assert [e["id"] for e in evidence] == expected_ids
    assert [e["rank"] for e in evidence] == [1, 2, 3]
    assert [e["content"] for e in evidence] == top
    for e in evidence:
        assert e["score"] == pytest.approx(float(scores[int(e["id"])]))
    assert a[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_ID)] == expected_ids[0]
    assert a[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_CONTENT)] == top[0]
    assert a[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_SCORE)] == pytest.approx(
        float(scores[int(expected_ids[0])])
    )
    assert CORPUS[0] == top[0]  # sanity: the right document wins


def test_token_list_documents_are_joined(exporter: InMemorySpanExporter) -> None:
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    top = bm25.get_top_n(QUERY, TOKENS, n=2)
    evidence = json.loads(attrs(only_span(exporter))[sc.GT_EVIDENCE])
    assert evidence[0]["content"] == " ".join(top[0])


@pytest.mark.parametrize("cls", [rank_bm25.BM25Okapi, rank_bm25.BM25Plus])
def test_get_scores_records_top_ranks(
    exporter: InMemorySpanExporter, cls: type, restore_settings: None
) -> None:
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, max_evidence_items=2))
    bm25 = cls(TOKENS)
    scores = bm25.get_scores(QUERY)
    with suppress_instrumentation():
        plain = bm25.get_scores(QUERY)
    assert isinstance(scores, np.ndarray)
    np.testing.assert_array_equal(scores, plain)
    a = attrs(only_span(exporter))
    evidence = json.loads(a[sc.GT_EVIDENCE])
    assert len(evidence) == 2
    assert a[sc.GT_EVIDENCE_COUNT] == len(CORPUS)
    assert sc.GT_EVIDENCE in a[sc.GT_TRUNCATED]
    best = int(np.argmax(scores))
    assert evidence[0]["id"] == str(best)
    assert evidence[0]["score"] == pytest.approx(float(scores[best]))
    assert "content" not in evidence[0]  # get_scores never sees the documents
    assert sc.GT_RETRIEVAL_K not in a


def test_get_top_n_error_passes_through(exporter: InMemorySpanExporter) -> None:
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    with pytest.raises(AssertionError):
        bm25.get_top_n(QUERY, CORPUS[:2], n=1)  # the library's own corpus-size check
    span = only_span(exporter)
    assert span.status.status_code == StatusCode.ERROR
    assert attrs(span)[sc.ERROR_TYPE] == "AssertionError"


def test_nested_under_parent_and_context_restored(exporter: InMemorySpanExporter) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    with tracer.start_as_current_span("request") as parent:
        bm25.get_top_n(QUERY, CORPUS, n=1)
        with tracer.start_as_current_span("after") as after:
            pass
    spans = {s.name: s for s in exporter.get_finished_spans()}
    retrieval = spans["retrieval BM25Okapi"]
    assert retrieval.parent is not None
    assert retrieval.parent.span_id == parent.get_span_context().span_id
    assert spans["after"].parent is not None
    assert spans["after"].parent.span_id == parent.get_span_context().span_id
    assert after.get_span_context().span_id != retrieval.context.span_id


def test_content_capture_off(exporter: InMemorySpanExporter, restore_settings: None) -> None:
    _runtime.install(_runtime.Settings(capture=frozenset()))
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    bm25.get_top_n(QUERY, CORPUS, n=2)
    a = attrs(only_span(exporter))
    assert "Spielberg" not in json.dumps(a)
    assert "directed" not in json.dumps(a)  # the query is content too
    evidence = json.loads(a[sc.GT_EVIDENCE])
    assert evidence[0]["content_hash"].startswith("sha256:")
    assert evidence[0]["id"] == "0"


def test_uninstrument_restores_and_reinstrument_is_single() -> None:
    originals = {
        "top_n": rank_bm25.BM25.get_top_n,
        "okapi": rank_bm25.BM25Okapi.get_scores,
        "plus": rank_bm25.BM25Plus.get_scores,
        "l": rank_bm25.BM25L.get_scores,
    }
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    inst = RankBM25Instrumentor()
    inst.instrument(tracer_provider=provider)
    inst.instrument(tracer_provider=provider)
    assert rank_bm25.BM25Okapi.get_scores is not originals["okapi"]
    inst.uninstrument()
    inst.uninstrument()
    assert rank_bm25.BM25.get_top_n is originals["top_n"]
    assert rank_bm25.BM25Okapi.get_scores is originals["okapi"]
    assert rank_bm25.BM25Plus.get_scores is originals["plus"]
    assert rank_bm25.BM25L.get_scores is originals["l"]
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    bm25.get_top_n(QUERY, CORPUS, n=1)
    assert exp.get_finished_spans() == ()
    inst.instrument(tracer_provider=provider)
    try:
        bm25.get_top_n(QUERY, CORPUS, n=1)
    finally:
        inst.uninstrument()
    assert len(exp.get_finished_spans()) == 1
    assert RankBM25Instrumentor().instrumentation_dependencies() == ("rank-bm25 >= 0.2",)


@pytest.mark.parametrize("ours_first", [True, False])
@pytest.mark.parametrize("ours_out_first", [True, False])
def test_uninstrument_takes_off_only_its_own_layer(ours_first: bool, ours_out_first: bool) -> None:
    """Another tool's wrapt layer (put on and taken off as OpenTelemetry instrumentations do)."""
    original = vars(rank_bm25.BM25)["get_top_n"]
    theirs: list[str] = []

    def their_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        theirs.append("call")
        return wrapped(*args, **kwargs)

    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    inst = RankBM25Instrumentor()
    steps = [
        lambda: inst.instrument(tracer_provider=provider),
        lambda: wrap_function_wrapper(rank_bm25, "BM25.get_top_n", their_wrapper),
    ]
    removals = [inst.uninstrument, lambda: unwrap(rank_bm25.BM25, "get_top_n")]
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    try:
        for step in steps if ours_first else steps[::-1]:
            step()
        bm25.get_top_n(QUERY, CORPUS, n=1)
        assert (len(exp.get_finished_spans()), len(theirs)) == (1, 1)
        first, second = removals if ours_out_first else removals[::-1]
        first()
        bm25.get_top_n(QUERY, CORPUS, n=1)
        assert (len(exp.get_finished_spans()), len(theirs)) == (
            (1, 2) if ours_out_first else (2, 1)
        )
        second()
        bm25.get_top_n(QUERY, CORPUS, n=1)
        assert (len(exp.get_finished_spans()), len(theirs)) == (
            (1, 2) if ours_out_first else (2, 1)
        )
        assert rank_bm25.BM25.get_top_n is original
    finally:
        inst.uninstrument()
        rank_bm25.BM25.get_top_n = original  # type: ignore[method-assign]
        provider.shutdown()


def test_suppressed_and_disabled(exporter: InMemorySpanExporter, restore_settings: None) -> None:
    bm25 = rank_bm25.BM25Okapi(TOKENS)
    with suppress_instrumentation():
        bm25.get_top_n(QUERY, CORPUS, n=1)
    _runtime.install(_runtime.Settings(enabled=False))
    bm25.get_scores(QUERY)
    assert exporter.get_finished_spans() == ()
