"""Fuzzing the readers: arbitrary bytes never raise anything but TraceReadError."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from google.protobuf.internal.encoder import _VarintBytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.collectors import ReadReport, TraceReadError, read_traces
from tests.support.otlp_spans import agent_trace, rag_trace, request_json, request_proto

_GOOD_LINE = json.dumps(request_json(rag_trace()))
_GOOD_PROTO = request_proto(agent_trace())
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _read_all(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        report = ReadReport()
        for trace in read_traces([path], report=report):
            trace.to_json()  # every built trace serialises
        assert all(isinstance(e, TraceReadError) for e in report.errors)
        try:  # strict mode: only the documented error type may escape
            list(read_traces([path]))
        except TraceReadError:
            pass


@_FUZZ
@given(st.binary(max_size=600))
def test_random_bytes(data: bytes) -> None:
    for name in ("x.jsonl", "x.pb", "x"):
        _read_all(data, name)


@_FUZZ
@given(st.data())
def test_mutated_json_lines(data: st.DataObject) -> None:
    raw = bytearray(_GOOD_LINE.encode())
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "delete", "insert"]))
        if op == "flip":
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "delete":
            del raw[pos]
        else:
            raw.insert(pos, data.draw(st.sampled_from(list(b'{}[]":,0a\\'))))
    _read_all(bytes(raw) + b"\n" + _GOOD_LINE.encode() + b"\n", "m.jsonl")


@_FUZZ
@given(st.data())
def test_mutated_json_values(data: st.DataObject) -> None:
    """Structurally valid JSON with wrong value types in random places."""
    obj = json.loads(_GOOD_LINE)
    spans = obj["resourceSpans"][0]["scopeSpans"][0]["spans"]
    span = spans[data.draw(st.integers(0, len(spans) - 1))]
    key = data.draw(st.sampled_from(sorted(span)))
    junk = data.draw(
        st.one_of(
            st.none(),
            st.integers(),
            st.text(max_size=5),
            st.lists(st.integers(), max_size=2),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            st.booleans(),
        )
    )
    attrs = span.get("attributes")
    if data.draw(st.booleans()) or not attrs:
        span[key] = junk
    else:
        attr = span["attributes"][data.draw(st.integers(0, len(span["attributes"]) - 1))]
        attr["value"] = {
            data.draw(
                st.sampled_from(
                    [
                        "stringValue",
                        "intValue",
                        "doubleValue",
                        "boolValue",
                        "arrayValue",
                        "kvlistValue",
                        "bogus",
                    ]
                )
            ): junk
        }
    _read_all(json.dumps(obj).encode() + b"\n", "v.jsonl")


@_FUZZ
@given(st.data())
def test_mutated_protobuf(data: st.DataObject) -> None:
    raw = bytearray(_VarintBytes(len(_GOOD_PROTO)) + _GOOD_PROTO)
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    _read_all(bytes(raw), "m.pb")
