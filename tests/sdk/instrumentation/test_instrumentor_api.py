"""An instrumentor of a third library, written here with the public helpers only.

``notecase`` is a tiny library defined in this file (a module registered for the test): a
``Shelf`` of notes whose ``find(query, limit)`` returns the matching notes, best first. Its
instrumentor, below, imports from the SDK only ``groundtrace.sdk.semconv`` and the names of
``groundtrace.sdk.instrumentation``, exactly as docs/CONTRIBUTING.md ("Add an instrumentor")
tells an author to; the spans go through the real OpenTelemetry SDK into memory.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer
from wrapt import wrap_function_wrapper

import groundtrace.sdk.instrumentation as api
from groundtrace.sdk import semconv as sc
from groundtrace.sdk.instrumentation import (
    Content,
    Layers,
    Recorder,
    Wrapper,
    active_settings,
    logger,
    record_evidence,
    record_failure,
    safe_str,
    tracer_source,
)
from tests.sdk.conftest import Traces

# -- the third library ---------------------------------------------------------------------


@dataclass
class Note:
    """A note of the fake library: ``id``, ``title`` and ``text`` are read as evidence."""

    id: str
    title: str
    text: str


class Shelf:
    """The fake library's one class; ``find`` is what the instrumentor patches."""

    def __init__(self, notes: list[Note]) -> None:
        self.notes = notes
        self.seen_span: Span | None = None

    def find(self, query: str, limit: int = 3) -> list[Note]:
        """The notes sharing a word with ``query``, most shared words first."""
        self.seen_span = trace.get_current_span()  # what the library's own calls would see
        if not query:
            raise KeyError("empty query")
        words = set(query.lower().split())
        scored = [(len(words & set(n.text.lower().split())), n) for n in self.notes]
        return [n for score, n in sorted(scored, key=lambda p: -p[0]) if score][:limit]


NOTES = [
    Note("n-tide", "Tides", "the moon pulls the sea into tides"),
    Note("n-bread", "Bread", "flour water salt and time make bread"),
    Note("n-moon", "Moon", "the moon has phases and no air"),
]
FIND = vars(Shelf)["find"]  # the original function, to check uninstrument() against


@pytest.fixture(autouse=True)
def notecase(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The fake library as an importable module ``notecase``."""
    module = types.ModuleType("notecase")
    module.Shelf = Shelf  # type: ignore[attr-defined]
    module.Note = Note  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "notecase", module)
    return module


# -- its instrumentor, through the public helpers only -------------------------------------

_LAYERS = Layers()


def _end(span: Span, rec: Recorder, exc: BaseException | None) -> None:
    try:
        record_failure(span, rec, exc)
        span.set_attributes(rec.final())
    except Exception:
        logger.debug("notecase span attributes incomplete", exc_info=True)
    finally:
        span.end()


def find_wrapper(tracer_of: Callable[[], Tracer]) -> Wrapper:
    """One RETRIEVE span per ``Shelf.find``."""

    def wrapper(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        current = active_settings()
        if current is None:
            return wrapped(*args, **kwargs)
        try:
            rec = Recorder(current)
            rec.attrs[sc.GT_ACTION] = sc.Action.RETRIEVE.value
            rec.attrs[sc.GT_RETRIEVAL_RETRIEVER] = type(instance).__name__
            query = args[0] if args else kwargs.get("query")
            if current.captures(Content.QUERY):
                rec.put_text(sc.GT_RETRIEVAL_QUERY, safe_str(query))
            limit = args[1] if len(args) > 1 else kwargs.get("limit", 3)
            rec.attrs[sc.GT_RETRIEVAL_K] = limit
            span = tracer_of().start_span("retrieval notecase", kind=SpanKind.CLIENT)
            token = otel_context.attach(trace.set_span_in_context(span))
        except Exception:
            logger.debug("notecase call not traced", exc_info=True)
            return wrapped(*args, **kwargs)
        done = False
        try:
            result = wrapped(*args, **kwargs)
            done = True
        finally:
            otel_context.detach(token)
            if not done:  # the application's exception propagates unchanged
                _end(span, rec, sys.exc_info()[1])
        try:
            record_evidence(rec, result, sc.Action.RETRIEVE)
        except Exception:
            logger.debug("notecase results not recorded", exc_info=True)
        _end(span, rec, None)
        return result

    return wrapper


class NotecaseInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """OpenTelemetry instrumentor for the fake ``notecase`` library."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return ()  # the fake library is no installed distribution: nothing to check

    def _instrument(self, **kwargs: Any) -> None:
        module = importlib.import_module("notecase")
        _LAYERS.wrap(
            module.Shelf, "find", find_wrapper(tracer_source(kwargs.get("tracer_provider")))
        )

    def _uninstrument(self, **kwargs: Any) -> None:
        _LAYERS.unwrap()


# -- tests ---------------------------------------------------------------------------------


@pytest.fixture
def instrumented(traces: Traces) -> Iterator[Traces]:
    """``notecase`` instrumented, its spans going to groundtrace's provider (``traces``)."""
    inst = NotecaseInstrumentor()
    inst.instrument()
    try:
        yield traces
    finally:
        inst.uninstrument()


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_the_public_helpers_are_the_sdk_objects_themselves() -> None:
    from groundtrace.sdk import _attributes, _evidence, _evidence_attributes, _record, _runtime
    from groundtrace.sdk.instrumentation import _base

    origin = {
        "AttributeValue": _record,
        "Recorder": _record,
        "Content": _runtime,
        "Settings": _runtime,
        "logger": _runtime,
        "safe_json": _attributes,
        "safe_str": _attributes,
        "EvidenceItem": _evidence,
        "normalize_item": _evidence,
        "record_evidence": _evidence_attributes,
        "INSTRUMENTATION_NAME": _base,
        "Layers": _base,
        "Wrapper": _base,
        "active_settings": _base,
        "record_failure": _base,
        "tracer_source": _base,
    }
    assert set(origin) == set(api.__all__)
    for name, module in origin.items():
        assert getattr(api, name) is getattr(module, name), name
    assert set(api.__all__) <= set(dir(api))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        api.nope


def test_a_call_becomes_one_retrieve_span_with_its_evidence(instrumented: Traces) -> None:
    shelf = Shelf(NOTES)
    tracer = instrumented.provider.get_tracer("app")
    with tracer.start_as_current_span("handle") as parent:
        found = shelf.find("moon tides", limit=2)

    assert [n.id for n in found] == ["n-tide", "n-moon"]  # what the library returns, unchanged
    span = instrumented.by_name("retrieval notecase")
    assert span.kind is SpanKind.CLIENT
    assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
    assert shelf.seen_span is not None
    assert shelf.seen_span.get_span_context().span_id == span.context.span_id
    a = attrs(span)
    assert a[sc.GT_ACTION] == sc.Action.RETRIEVE.value
    assert a[sc.GT_RETRIEVAL_RETRIEVER] == "Shelf"
    assert a[sc.GT_RETRIEVAL_QUERY] == "moon tides"
    assert a[sc.GT_RETRIEVAL_K] == 2
    assert a[sc.GT_EVIDENCE_COUNT] == 2
    evidence = json.loads(a[sc.GT_EVIDENCE])
    assert [(e["id"], e["rank"], e["title"]) for e in evidence] == [
        ("n-tide", 1, "Tides"),
        ("n-moon", 2, "Moon"),
    ]
    assert evidence[0]["content"] == "the moon pulls the sea into tides"
    assert span.status.status_code is StatusCode.UNSET
    assert trace.get_current_span() is trace.INVALID_SPAN  # the context was left as found


def test_an_explicit_provider_takes_the_spans(traces: Traces) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = NotecaseInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        Shelf(NOTES).find("bread")
    finally:
        inst.uninstrument()
        provider.shutdown()
    [span] = exporter.get_finished_spans()
    assert span.name == "retrieval notecase"
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == api.INSTRUMENTATION_NAME
    assert traces.spans() == []  # not groundtrace's configured provider


def test_a_failure_is_recorded_and_the_exception_passes_unchanged(instrumented: Traces) -> None:
    shelf = Shelf(NOTES)
    with pytest.raises(KeyError) as raised:
        shelf.find("")
    assert raised.value.args == ("empty query",)
    assert raised.traceback[-1].name == "find"  # raised by the library, not by the wrapper
    span = instrumented.one(sc.Action.RETRIEVE.value)
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)[sc.ERROR_TYPE] == "KeyError"
    assert [e.name for e in span.events] == ["exception"]
    assert sc.GT_EVIDENCE not in attrs(span)


def test_content_off_records_the_evidence_by_reference_only(instrumented: Traces) -> None:
    instrumented.settings(capture=frozenset())
    Shelf(NOTES).find("moon")
    a = attrs(instrumented.one(sc.Action.RETRIEVE.value))
    assert sc.GT_RETRIEVAL_QUERY not in a
    evidence = json.loads(a[sc.GT_EVIDENCE])
    assert [e["id"] for e in evidence] == ["n-tide", "n-moon"]
    assert all("content" not in e and "title" not in e for e in evidence)
    assert all(e["content_hash"].startswith("sha256:") for e in evidence)


def test_texts_are_clipped_through_the_recorder(instrumented: Traces) -> None:
    instrumented.settings(max_attribute_length=8)
    Shelf(NOTES).find("the moon pulls the sea")
    a = attrs(instrumented.one(sc.Action.RETRIEVE.value))
    assert a[sc.GT_RETRIEVAL_QUERY] == "the moon"
    assert sc.GT_RETRIEVAL_QUERY in a[sc.GT_TRUNCATED]


def test_suppressed_or_disabled_calls_run_untraced(instrumented: Traces) -> None:
    shelf = Shelf(NOTES)
    with suppress_instrumentation():
        assert [n.id for n in shelf.find("bread")] == ["n-bread"]
    instrumented.settings(enabled=False)
    assert [n.id for n in shelf.find("bread")] == ["n-bread"]
    assert instrumented.spans() == []


def test_uninstrument_restores_exactly_and_reinstrument_is_one_layer(traces: Traces) -> None:
    inst = NotecaseInstrumentor()
    inst.instrument()
    inst.instrument()  # idempotent: still one layer
    assert vars(Shelf)["find"] is not FIND
    assert vars(Shelf)["find"].__wrapped__ is FIND
    Shelf(NOTES).find("moon")
    inst.uninstrument()
    assert vars(Shelf)["find"] is FIND
    Shelf(NOTES).find("moon")
    assert len(traces.spans()) == 1  # only the call made while instrumented
    inst.uninstrument()  # idempotent
    assert vars(Shelf)["find"] is FIND


def test_uninstrument_leaves_another_tools_layer_in_place(traces: Traces) -> None:
    calls: list[str] = []

    def theirs(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        calls.append("theirs")
        return wrapped(*args, **kwargs)

    inst = NotecaseInstrumentor()
    wrap_function_wrapper(sys.modules["notecase"], "Shelf.find", theirs)
    try:
        inst.instrument()  # ours goes innermost, under theirs
        Shelf(NOTES).find("moon")
        inst.uninstrument()
        outer = vars(Shelf)["find"]
        assert outer.__wrapped__ is FIND  # their layer, now right around the original
        Shelf(NOTES).find("moon")
        assert calls == ["theirs", "theirs"]
        assert len(traces.spans()) == 1
    finally:
        inst.uninstrument()
        Shelf.find = FIND  # type: ignore[method-assign]
