"""The readers' two OTLP/JSON decoders agree: the typed msgspec path reads a line exactly as
the checked decoder (:mod:`._otlp_json`) would, or declines it (``None``) and leaves the line
to the checked decoder, which reads the rest and words every error.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.collectors.readers import _otlp_json, _otlp_structs
from groundtrace.collectors.readers._otlp_json import SpanDecodeError
from groundtrace.collectors.spans import SourceLocation
from tests.support.otlp_spans import agent_trace, rag_trace, request_json

_BASE = request_json(rag_trace() + agent_trace())
_LOCATION = SourceLocation("f.jsonl", 3)
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_JUNK = st.one_of(
    st.none(),
    st.integers(-3, 7),
    st.booleans(),
    st.floats(allow_nan=False),
    st.sampled_from(["", "x", "12", "SPAN_KIND_SERVER", "STATUS_CODE_ERROR", "AQIDBAUGBwg="]),
    st.sampled_from(["0102030405060708", "0102030405060708090A0B0C0D0E0F10", "01020304 5060708"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["code", "message", "name", "stringValue"]), st.integers()),
)


def _outcome(decode: Any, obj: Any) -> tuple[Any, ...]:
    errors: list[SpanDecodeError] = []
    try:
        records = decode(obj, _LOCATION, errors)
    except SpanDecodeError as exc:
        return ("raised", str(exc), exc.where)
    return ("ok", records, [(str(e), e.where) for e in errors])


def _assert_precise(outcome: tuple[Any, ...]) -> None:
    """Every error of the checked decoder says what is wrong and where (a JSON path)."""
    errors = [outcome[1:]] if outcome[0] == "raised" else outcome[2]
    for message, where in errors:
        assert message and (where == "$" or where.startswith("resourceSpans[")), (message, where)


def _assert_same(obj: Any) -> bool:
    """The typed path agrees with the checked decoder; True when the typed path read it."""
    checked = _outcome(_otlp_json.decode_request, obj)
    _assert_precise(checked)
    typed = _otlp_structs.decode_line(json.dumps(obj).encode(), _LOCATION)
    if typed is None:
        return False
    assert ("ok", typed, []) == checked
    return True


def _places(obj: dict[str, Any]) -> list[tuple[Any, Any]]:
    """Every (container, key) of the request where a value can be replaced."""
    found: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found.append((node, key))
                walk(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found.append((node, index))
                walk(value)

    walk(obj)
    return found


def test_canonical_request_decodes_the_same() -> None:
    checked = _outcome(_otlp_json.decode_request, _BASE)
    assert checked[0] == "ok" and len(checked[1]) == len(rag_trace() + agent_trace())
    assert _assert_same(_BASE)  # the struct path reads the canonical line itself


def test_struct_path_declines_what_it_cannot_read_exactly() -> None:
    line = json.dumps(_BASE).encode()
    location = _LOCATION
    assert _otlp_structs.decode_line(b"{not json", location) is None
    assert _otlp_structs.decode_line(b"[1, 2]", location) is None
    for value in (
        {"kvlistValue": {"values": []}},
        {"bytesValue": "AAE="},
        {"intValue": "1", "doubleValue": 2.0},  # two kinds: key order decides
        {"stringValue": None},
        {"doubleValue": "Infinity"},
        {"otherValue": 1},
    ):
        obj = json.loads(line)
        span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        span["attributes"].append({"key": "k", "value": {"arrayValue": {"values": [value]}}})
        assert _otlp_structs.decode_line(json.dumps(obj).encode(), location) is None
        _assert_same(obj)


@_SETTINGS
@given(st.data())
def test_any_replaced_value_reads_and_reports_the_same(data: st.DataObject) -> None:
    obj = json.loads(json.dumps(_BASE))
    for _ in range(data.draw(st.integers(1, 3))):
        places = _places(obj)
        container, key = places[data.draw(st.integers(0, len(places) - 1))]
        container[key] = data.draw(_JUNK)
    _assert_same(obj)


@_SETTINGS
@given(st.data())
def test_removed_fields_read_and_report_the_same(data: st.DataObject) -> None:
    obj = json.loads(json.dumps(_BASE))
    places = [(c, k) for c, k in _places(obj) if isinstance(c, dict)]
    for _ in range(data.draw(st.integers(1, 3))):
        container, key = places[data.draw(st.integers(0, len(places) - 1))]
        container.pop(key, None)
    _assert_same(obj)


def test_non_canonical_encodings_are_accepted_like_the_checked_decoder() -> None:
    obj = json.loads(json.dumps(_BASE))
    span = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"] = "AQIDBAUGBwgJCgsMDQ4PEA=="  # base64
    span["kind"] = "SPAN_KIND_SERVER"
    span["startTimeUnixNano"] = 5
    span["status"] = {"code": "STATUS_CODE_ERROR", "message": "boom"}
    checked = _outcome(_otlp_json.decode_request, obj)
    assert checked[0] == "ok" and checked[1][0].trace_id == "0102030405060708090a0b0c0d0e0f10"
    assert checked[1][0].kind == "SERVER" and checked[1][0].status.code == "ERROR"
    assert not _assert_same(obj)  # not canonical: the typed path leaves it to the checked one
