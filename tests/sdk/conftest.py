"""SDK test fixtures: a private TracerProvider with an in-memory exporter per test."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Sampler

from groundtrace.sdk import _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk import shutdown as sdk_shutdown

APP_NAME = "test-app"
APP_VERSION = "1.2.3"


class Traces:
    """The spans a test produced, plus a way to change settings mid-test."""

    def __init__(self, exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
        self.exporter = exporter
        self.provider = provider

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def one(self, action: str | None = None) -> ReadableSpan:
        spans = [
            s
            for s in self.spans()
            if action is None or (s.attributes or {}).get(sc.GT_ACTION) == action
        ]
        assert len(spans) == 1, [s.name for s in self.spans()]
        return spans[0]

    def by_name(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def settings(self, **changes: Any) -> None:
        _runtime.install(dataclasses.replace(_runtime.settings(), **changes), self.provider)


def _make(sampler: Sampler | None) -> Iterator[Traces]:
    exporter = InMemorySpanExporter()
    resource = Resource.create({sc.SERVICE_NAME: APP_NAME, sc.SERVICE_VERSION: APP_VERSION})
    provider = (
        TracerProvider(resource=resource)
        if sampler is None
        else TracerProvider(resource=resource, sampler=sampler)
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings = _runtime.settings()
    old_provider = _runtime._STATE.provider
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS), provider)
    try:
        yield Traces(exporter, provider)
    finally:
        _runtime.install(old_settings, old_provider)
        provider.shutdown()


@pytest.fixture
def traces() -> Iterator[Traces]:
    """Tracing into memory with default settings (all content captured)."""
    yield from _make(None)


@pytest.fixture
def make_traces() -> Callable[[Sampler], Iterator[Traces]]:
    """Build a tracing setup with a given sampler (use as a generator)."""
    return _make


@pytest.fixture
def capture_everything() -> Iterator[None]:
    """Capture every content field (the default captures none); restore settings after."""
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    _runtime.install(_runtime.Settings(capture=_runtime.CONTENT_FIELDS), old_provider)
    try:
        yield
    finally:
        _runtime.install(old_settings, old_provider)


@pytest.fixture
def restore_settings() -> Iterator[None]:
    """Put back whatever settings and provider a test installs."""
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    try:
        yield
    finally:
        _runtime.install(old_settings, old_provider)


@pytest.fixture
def clean_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ``GROUNDTRACE_*`` / ``OTEL_*`` variable set; afterwards what ``configure()`` created is
    shut down and the default settings are back."""
    for key in list(os.environ):
        if key.startswith(("GROUNDTRACE_", "OTEL_")):
            monkeypatch.delenv(key)
    yield
    sdk_shutdown()
    _runtime.install(_runtime.Settings(), None)
