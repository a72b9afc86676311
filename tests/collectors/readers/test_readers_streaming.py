"""Streaming in bounded memory: the same traces as grouping everything in memory, a default cap.

The input is the SDK's own: the document agent's export (decorators + the OTLP-JSON file
exporter), read back by the readers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from groundtrace.collectors import SpanRecord, Trace, build_traces, read_traces
from groundtrace.collectors.model import FindingKind
from groundtrace.collectors.normalize import DEFAULT_MAX_PENDING_SPANS, build_trace
from groundtrace.collectors.readers import read_spans
from groundtrace.examples.agent_docs.app import run


@pytest.fixture(scope="module")
def sdk_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agent")
    run(out)
    return out / "traces"


@pytest.fixture(scope="module")
def spans(sdk_traces: Path) -> list[SpanRecord]:
    return list(read_spans([sdk_traces]))


def _in_memory(records: list[SpanRecord]) -> list[Trace]:
    """The reference: every span held, grouped by trace id in first-seen order."""
    groups: dict[str, list[SpanRecord]] = {}
    for record in records:
        groups.setdefault(record.trace_id, []).append(record)
    return [build_trace(group) for group in groups.values()]


def _json(traces: list[Trace]) -> list[str]:
    return [t.to_json() for t in traces]


def test_streaming_equals_grouping_everything_in_memory(
    sdk_traces: Path, spans: list[SpanRecord]
) -> None:
    assert len(spans) == 64
    reference = _in_memory(spans)
    assert len(reference) == 16
    # default window and cap: the whole small input, in first-seen order
    assert _json(list(read_traces([sdk_traces]))) == _json(reference)
    # a window far smaller than the input: traces complete early, each one whole and equal
    early = list(build_traces(iter(spans), window=8))
    assert sorted(_json(early)) == sorted(_json(reference))
    assert not any(t.findings_of(FindingKind.SPLIT_TRACE) for t in early)


def test_spans_of_a_trace_spread_beyond_the_window_lose_nothing(spans: list[SpanRecord]) -> None:
    shuffled = list(spans)
    random.Random(7).shuffle(shuffled)
    # within the window (64 spans < 10 000): shuffling changes nothing but the order
    assert sorted(_json(list(build_traces(iter(shuffled))))) == sorted(_json(_in_memory(spans)))
    # beyond it: late spans form partial traces that say so; every span is still there
    split = list(build_traces(iter(shuffled), window=2))
    assert sum(len(t.steps) for t in split) == len(spans)
    assert len(split) > 16 and any(t.findings_of(FindingKind.SPLIT_TRACE) for t in split)


def test_the_pending_spans_are_capped_by_default(spans: list[SpanRecord]) -> None:
    """Traces that never complete (no root) are emitted once the cap is reached, not held."""
    rootless = [s for s in spans if s.parent_span_id]
    consumed = 0

    def copies() -> Iterator[SpanRecord]:  # twice the cap: memory-bound reads stop halfway
        nonlocal consumed
        for copy in range(2 * DEFAULT_MAX_PENDING_SPANS // len(rootless)):
            for span in rootless:
                consumed += 1
                yield msgspec.structs.replace(span, trace_id=f"{copy:08x}{span.trace_id[8:]}")

    first = next(build_traces(copies()))
    assert consumed == DEFAULT_MAX_PENDING_SPANS + 1
    assert first.findings_of(FindingKind.NO_ROOT)
