"""The collectors' C extension (``_speedups``) gives what its pure-Python references give.

* ``records``: the walk of decoded OTLP/JSON structs into span records (``_otlp_structs``);
* ``step_attributes``: the attributes a step keeps (``normalize._build``);
* ``construct``: a trace-model object from all its field values (``_model_init``);
* ``evidence``: decoded ``groundtrace.evidence`` items into Evidence (``_ext_groundtrace``);
* ``structure``: the structural check of a trace with nothing to report (``_structure``);
* ``untrack`` / ``retrack``: the grouping window's own spans, out of the cyclic collector's
  passes while it holds them (no Python reference: the same traces either way).

The extension is optional at install time. ``make test`` (and so CI) sets
``GROUNDTRACE_EXPECT_NATIVE=1``, which turns its absence into a failure instead of skips.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.collectors import _native, model
from groundtrace.collectors._model_init import construct
from groundtrace.collectors.normalize import _ext_groundtrace as gt_ext
from groundtrace.collectors.normalize import _structure, build_traces
from groundtrace.collectors.normalize._build import _step_attributes
from groundtrace.collectors.normalize._stream import stream_traces
from groundtrace.collectors.readers import _otlp_structs, read_spans
from groundtrace.collectors.spans import SourceLocation, SpanRecord
from tests.support.otlp_spans import TRACE_A, agent_trace, rag_trace, request_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collectors"
_LOCATION = SourceLocation("f.jsonl", 7)
_BASE = request_json(rag_trace() + agent_trace())

_MODEL_CLASSES = [
    getattr(model, n) for n in model.__all__ if dataclasses.is_dataclass(getattr(model, n))
]
native = pytest.mark.skipif(not _native.NATIVE, reason="the C extension is not built")


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


def _first_span(obj: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return span


def test_the_extension_is_built_where_expected() -> None:
    if os.environ.get("GROUNDTRACE_EXPECT_NATIVE") == "1":
        assert _native.NATIVE, "the C extension _speedups was not built or not loaded"
        assert _otlp_structs._NATIVE is not None  # the readers use the C walk
    else:
        pytest.skip("GROUNDTRACE_EXPECT_NATIVE is not set")


@native
def test_fixture_files_read_the_same_with_both_walks() -> None:
    lines = 0
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            location = SourceLocation(str(path), number)
            walked = _otlp_structs.python_records(line, location)
            assert walked is not None, f"{path.name}:{number}"
            assert _otlp_structs.decode_line(line, location) == walked
            lines += 1
    assert lines >= 5


@native
def test_records_share_what_the_python_walk_shares() -> None:
    records = _otlp_structs.decode_line(_line(_BASE), _LOCATION)
    assert records is not None and len(records) == len(rag_trace() + agent_trace())
    assert all(r.location is _LOCATION for r in records)
    assert len({id(r.resource) for r in records}) == 1  # one resource dict per resourceSpans
    assert records[0].events is not records[1].events  # each record its own list
    assert records == _otlp_structs.python_records(_line(_BASE), _LOCATION)


@native
def test_keys_names_and_short_values_are_one_object_across_lines() -> None:
    obj = json.loads(_line(_BASE))
    long_text = "x" * 33
    _first_span(obj)["attributes"].append({"key": "long", "value": {"stringValue": long_text}})
    first = _otlp_structs.decode_line(_line(obj), _LOCATION)
    second = _otlp_structs.decode_line(_line(obj), _LOCATION)  # another line, same text
    assert first is not None and second is not None and first == second
    shared = 0
    for a, b in zip(first, second, strict=True):
        assert a.name is b.name
        for (key_a, value_a), (key_b, value_b) in zip(
            a.attributes.items(), b.attributes.items(), strict=True
        ):
            assert key_a is key_b
            if isinstance(value_a, str) and len(value_a) <= 32:
                assert value_a is value_b
                shared += 1
    assert shared > 10
    assert first[0].attributes["long"] is not second[0].attributes["long"]  # long: not shared


@native
def test_the_shared_texts_stay_bounded_on_endless_distinct_keys() -> None:
    speedups = _native.speedups
    assert speedups is not None
    obj = json.loads(_line(_BASE))
    span = _first_span(obj)
    for batch in range(4 * speedups.MAX_SHARED // 2000 + 1):
        span["attributes"] = [
            {"key": f"k{batch}.{i}", "value": {"stringValue": f"v{batch}.{i}"}} for i in range(1000)
        ]
        records = _otlp_structs.decode_line(_line(obj), _LOCATION)
        assert records is not None
        assert records[0].attributes[f"k{batch}.999"] == f"v{batch}.999"
        assert speedups.shared_count() <= speedups.MAX_SHARED


@native
def test_upper_case_ids_are_lowered_and_odd_values_read_like_the_python_walk() -> None:
    obj = json.loads(_line(_BASE))
    span = _first_span(obj)
    span["traceId"] = span["traceId"].upper()
    span["startTimeUnixNano"] = 12  # a JSON number instead of a string
    span["kind"] = 3
    span["status"] = {"code": 2, "message": "boom"}
    span["events"] = [{"name": "e", "timeUnixNano": "5", "attributes": []}]
    span["attributes"] = [
        {"key": "i", "value": {"intValue": "-42"}},
        {"key": "d", "value": {"doubleValue": 1}},
        {"key": "b", "value": {"boolValue": False}},
        {"key": "n", "value": {}},
        {"key": "z"},
        {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}, None, {}]}}},
        {"key": "both", "value": {"stringValue": "s", "intValue": "1"}},  # a string wins
    ]
    records = _otlp_structs.decode_line(_line(obj), _LOCATION)
    assert records is not None
    first = records[0]
    assert first.trace_id == span["traceId"].lower()
    assert (first.start_time_unix_nano, first.kind) == (12, "CLIENT")
    assert (first.status.code, first.status.message) == ("ERROR", "boom")
    assert first.events[0].time_unix_nano == 5
    assert first.attributes == {
        "i": -42,
        "d": 1.0,
        "b": False,
        "n": None,
        "z": None,
        "a": [1, None, None],
        "both": "s",
    }
    assert records == _otlp_structs.python_records(_line(obj), _LOCATION)


_READ_SCRIPT = """
import json, sys
from groundtrace.collectors import _native
from groundtrace.collectors.readers import read_spans
try:
    out = [[r.span_id, r.kind, r.start_time_unix_nano, r.attributes] for r in read_spans(sys.argv[1:])]
except Exception as exc:
    out = [type(exc).__name__, str(exc)]
print(json.dumps([_native.NATIVE, out]))
"""  # noqa: E501


def _in_child(script: str, *args: str, pure: bool) -> Any:
    """The JSON printed by ``script`` in a fresh interpreter, with or without the C walk."""
    env = dict(os.environ)
    env.pop("GROUNDTRACE_PURE_PYTHON", None)
    if pure:
        env["GROUNDTRACE_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _read_in_child(path: Path, *, pure: bool) -> Any:
    """What ``read_spans`` gives for ``path`` in a fresh interpreter (records or the error)."""
    native, outcome = _in_child(_READ_SCRIPT, str(path), pure=pure)
    assert native is not pure
    return outcome


@native
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("spanId", "01020304 5060708"),  # whitespace: the dict path decides (an error here)
        ("spanId", "0102030405060g08"),
        ("traceId", "0102"),
        ("startTimeUnixNano", "12x"),
        ("startTimeUnixNano", " 12"),  # int() accepts the blank: read on every path
        ("kind", 9),
        ("kind", 2**70),
        ("status", {"code": 7}),
    ],
)
def test_declined_lines_read_the_same_with_either_walk(
    tmp_path: Path, field: str, value: Any
) -> None:
    obj = json.loads(_line(_BASE))
    _first_span(obj)[field] = value
    line = _line(obj)
    path = tmp_path / "t.jsonl"
    path.write_bytes(line + b"\n")
    assert _read_in_child(path, pure=False) == _read_in_child(path, pure=True)
    if field != "startTimeUnixNano" or value != " 12":
        assert _otlp_structs.decode_line(line, _LOCATION) is None


@native
def test_arrays_nested_past_the_depth_limit_are_declined_and_read_by_the_dict_path(
    tmp_path: Path,
) -> None:
    value: dict[str, Any] = {"intValue": "1"}
    for _ in range(80):  # deeper than the C walk's limit of 64
        value = {"arrayValue": {"values": [value]}}
    obj = json.loads(_line(_BASE))
    _first_span(obj)["attributes"].append({"key": "deep", "value": value})
    line = _line(obj)
    assert _otlp_structs.decode_line(line, _LOCATION) is None
    walked = _otlp_structs.python_records(line, _LOCATION)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(line + b"\n")
    records = list(read_spans([path]))
    assert walked is not None and [r.attributes for r in records] == [r.attributes for r in walked]


@native
def test_setup_rejects_layouts_it_cannot_read_and_keeps_the_working_one() -> None:
    from groundtrace.collectors import _speedups

    with pytest.raises(TypeError, match="bad arguments"):
        _speedups.setup((), None, (), (), ())
    layouts = [(int, ("real",))] * 14
    with pytest.raises(TypeError, match="layout 0 is not"):
        _speedups.setup(((int, ("a", "b")), *layouts[1:]), None, ("A",), ("B",), ("C",))
    with pytest.raises(TypeError, match=r"int\.real is not a slot"):
        _speedups.setup(tuple(layouts), None, ("A",), ("B",), ("C",))
    with pytest.raises(TypeError, match="records"):
        _speedups.records(1)  # type: ignore[call-arg]
    assert _otlp_structs.decode_line(_line(_BASE), _LOCATION) is not None  # still set up


@native
def test_no_objects_leak_on_read_or_declined_lines() -> None:
    good = _line(_BASE)
    obj = json.loads(good)
    _first_span(obj)["spanId"] = "zz" * 8
    declined = _line(obj)
    for line in (good, declined):
        for _ in range(50):  # warm caches (interned strings, msgspec's key cache)
            _otlp_structs.decode_line(line, _LOCATION)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(2000):
                _otlp_structs.decode_line(line, _LOCATION)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        # a leak of even one small object per call would be >= 2000 * 32 bytes
        assert grown < 32_000, (line[:40], grown)


def test_pure_python_switch_selects_the_python_walk() -> None:
    script = "import json; from groundtrace.collectors import _native as n\n"
    script += "print(json.dumps(n.NATIVE))"
    assert _in_child(script, pure=True) is False


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=3),
    st.sampled_from(["x" * 256, "y" * 257, "\u00e9" * 257]),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=4),
    st.lists(st.integers(), min_size=32, max_size=34),
    st.lists(st.lists(st.integers(), max_size=1), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)


@native
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _VALUES, max_size=8))
def test_step_attributes_keep_the_same_entries_in_the_same_order(attrs: dict[str, Any]) -> None:
    assert _native.speedups is not None
    kept = _native.speedups.step_attributes(attrs)
    expected = _step_attributes(attrs)
    assert list(kept.items()) == list(expected.items())
    assert kept is not attrs


class _Str(str):
    """A str subclass: the Python reference keeps a long one (only exact strs are clipped)."""


@native
def test_step_attributes_follow_the_reference_on_subclasses_and_reject_non_dicts() -> None:
    assert _native.speedups is not None
    attrs: dict[str, Any] = {"s": _Str("z" * 300), "l": [_Str("q" * 300)], "t": True}
    assert _native.speedups.step_attributes(attrs) == _step_attributes(attrs)
    with pytest.raises(TypeError, match="takes a dict"):
        _native.speedups.step_attributes([("k", 1)])


@pytest.mark.parametrize("cls", _MODEL_CLASSES, ids=lambda c: c.__name__)
def test_construct_with_every_field_equals_the_constructor(cls: Any) -> None:
    fields = dataclasses.fields(cls)
    values = [object() if f.name != "request" else None for f in fields]
    built = construct(cls, *values)
    assert type(built) is cls
    assert built == cls(*values)
    assert [getattr(built, f.name) for f in fields] == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, fields[0].name, 1)


def test_construct_with_fewer_values_or_an_unregistered_class_calls_it() -> None:
    step = construct(model.Step, "s", None, "REQUEST", "n", 1, 2)  # defaults fill the rest
    assert step == model.Step("s", None, "REQUEST", "n", 1, 2)
    assert (
        step.attributes == {} and step.attributes is not construct(model.Step, *"abcdef").attributes
    )
    assert construct(dict, [("k", 1)]) == {"k": 1}
    with pytest.raises(TypeError):
        construct(model.Usage, 1, 2, 3, 4)


@native
def test_register_model_rejects_what_it_cannot_fill() -> None:
    assert _native.speedups is not None
    with pytest.raises(TypeError, match="register_model"):
        _native.speedups.register_model(model.Step, ["span_id"])
    with pytest.raises(TypeError, match="not a slot"):
        _native.speedups.register_model(model.Step, ("duration_ns",))  # a property
    with pytest.raises(TypeError, match="needs a class"):
        _native.speedups.construct()
    assert construct(model.Usage, 1, 2, 3) == model.Usage(1, 2, 3)  # still registered


_ITEM_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.none(), st.text(max_size=3)),
        "rank": st.one_of(st.none(), st.integers(-2, 10**20)),
        "score": st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-5, 5)),
        "title": st.one_of(st.none(), st.text(max_size=3)),
        "content": st.one_of(st.none(), st.text(max_size=5)),
        "length": st.one_of(st.none(), st.integers(0, 99)),
        "metadata": st.one_of(st.none(), st.dictionaries(st.text(max_size=2), st.integers())),
    },
)


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(_ITEM_FIELDS, max_size=6))
def test_evidence_items_convert_like_the_python_reference(items: list[dict[str, Any]]) -> None:
    raw = json.dumps(items)  # an infinite score is written as Infinity: msgspec rejects it
    assert _native.speedups is not None
    try:
        decoded = gt_ext._ITEMS.decode(raw)
    except Exception:
        assert gt_ext._typed_evidence(raw, "s1", "RETRIEVE") is None
        return
    expected = gt_ext.python_typed_evidence(decoded, "s1", "RETRIEVE")
    built = _native.speedups.evidence(decoded, "s1", "RETRIEVE")
    assert built is None or built == expected
    assert gt_ext._typed_evidence(raw, "s1", "RETRIEVE") == expected
    if built is not None:
        assert all(type(e) is model.Evidence and e.metadata is not None for e in built)


@native
def test_evidence_declines_non_finite_scores_and_foreign_items() -> None:
    assert _native.speedups is not None
    for score in (float("inf"), float("nan")):  # msgspec's decoder never yields them; belt
        decoded = [gt_ext._Item(id="a"), gt_ext._Item(id="b", score=score)]
        assert _native.speedups.evidence(decoded, "s", "RETRIEVE") is None
        assert gt_ext.python_typed_evidence(decoded, "s", "RETRIEVE") is None
    assert _native.speedups.evidence([1, 2], "s", "RETRIEVE") is None
    assert _native.speedups.evidence("[]", "s", "RETRIEVE") is None
    with pytest.raises(TypeError, match="setup_evidence"):
        _native.speedups.setup_evidence(gt_ext._Item, ("id",), model.Evidence)
    for cls in (model.Usage, dict):  # a 3-field model; not a model
        with pytest.raises(TypeError, match="registered 12-field model"):
            _native.speedups.setup_evidence(gt_ext._Item, ("id",) * 10, cls)
    with pytest.raises(TypeError, match="exactly 3"):
        _native.speedups.evidence([])
    empty = _native.speedups.evidence(gt_ext._ITEMS.decode("[{}]"), "s", "RERANK")
    assert empty == [model.Evidence(None, "s", "RERANK", 1, metadata={})]


_SPAN_IDS = [f"{i:016x}" for i in range(1, 6)]


@st.composite
def _span_sets(draw: st.DrawFn) -> list[SpanRecord]:
    """Up to 6 spans of one trace: duplicates, orphans, several roots and skew all possible."""
    spans = []
    for _ in range(draw(st.integers(1, 6))):
        start = draw(st.integers(0, 20))
        spans.append(
            SpanRecord(
                TRACE_A,
                draw(st.sampled_from(_SPAN_IDS)),
                draw(st.one_of(st.none(), st.just(""), st.sampled_from([*_SPAN_IDS, "f" * 16]))),
                draw(st.sampled_from(["a", "b"])),
                start,
                start + draw(st.integers(-2, 20)),
            )
        )
    return spans


@native
@settings(max_examples=400, deadline=None)
@given(_span_sets())
def test_structure_is_the_python_check_whenever_it_answers(records: list[SpanRecord]) -> None:
    assert _native.speedups is not None
    quiet = _native.speedups.structure(list(records), _structure._ORDER)
    findings: list[model.Finding] = []
    expected = _structure.python_check_structure(list(records), findings)
    assert (quiet is None) == bool(findings)  # it answers exactly when nothing is reported
    if quiet is not None:
        assert quiet[0] == expected.spans and quiet[1] is expected.root
    mixed: list[model.Finding] = []
    got = _structure.check_structure(list(records), mixed)
    assert (got.spans, got.root, mixed) == (expected.spans, expected.root, findings)


@native
def test_structure_declines_what_is_not_a_span_record() -> None:
    assert _native.speedups is not None
    assert _native.speedups.structure([object()], _structure._ORDER) is None
    with pytest.raises(TypeError, match="structure"):
        _native.speedups.structure((), _structure._ORDER)
    with pytest.raises(TypeError):  # the key fails: the error is not swallowed
        _native.speedups.structure(
            [SpanRecord(TRACE_A, "1" * 16, None, "n", 0, 1)] * 1, "not callable"
        )


def _leak_cases() -> list[tuple[str, Any]]:
    speedups = _native.speedups
    if speedups is None:
        return []
    items = gt_ext._ITEMS.decode('[{"id": "a", "rank": 2, "metadata": {"k": 1}}, {"score": 0.5}]')
    bad_items = [gt_ext._Item(score=float("inf"))]
    records = list(_otlp_structs.decode_line(_line(_BASE), _LOCATION) or [])
    trace_records = [r for r in records if r.trace_id == records[0].trace_id]
    attrs = {"a": "x" * 300, "b": [1, 2], "c": None, "d": 1.5, "e": [[1]]}
    step_args = ("s", None, "REQUEST", "n", 1, 2, "OK", "", "groundtrace", None, {}, None)
    return [
        ("step_attributes", lambda: speedups.step_attributes(attrs)),
        ("construct", lambda: construct(model.Step, *step_args)),
        ("construct_fallback", lambda: construct(model.Step, *step_args[:6])),
        ("evidence", lambda: speedups.evidence(items, "s", "RETRIEVE")),
        ("evidence_declined", lambda: speedups.evidence(bad_items, "s", "RETRIEVE")),
        ("structure", lambda: speedups.structure(trace_records, _structure._ORDER)),
        ("structure_declined", lambda: speedups.structure(records * 2, _structure._ORDER)),
        ("untrack_retrack", lambda: (speedups.untrack(records[0]), speedups.retrack(records))),
    ]


@native
@pytest.mark.parametrize(
    ("name", "call"), _leak_cases(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_no_objects_leak_from_the_other_functions(name: str, call: Any) -> None:
    for _ in range(50):
        call()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            call()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 32_000, (name, grown)


def _held_states(owned: bool) -> tuple[list[SpanRecord], list[tuple[bool, ...]], list[Any]]:
    """Records fed to the grouping stream, their GC states while held, and the traces."""
    obj = json.loads(_line(_BASE))
    span = _first_span(obj)
    span["attributes"].append(
        {"key": "x.ids", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}
    )
    span["events"] = [{"name": "e", "timeUnixNano": "1", "attributes": []}]
    records = _otlp_structs.decode_line(_line(obj), _LOCATION)
    assert records is not None
    held: list[tuple[bool, ...]] = []

    def feed() -> Any:
        yield from records
        # every span is in the window now: no trace has its root `window` spans back
        held.extend(
            (gc.is_tracked(r), gc.is_tracked(r.events), gc.is_tracked(r.attributes))
            for r in records
        )
        held.append((gc.is_tracked(records[0].attributes["x.ids"]),))

    traces = list(stream_traces(feed(), owned=owned))
    return records, held, traces


@native
def test_owned_spans_are_left_out_of_the_collector_while_held_and_put_back_after() -> None:
    records, held, traces = _held_states(owned=True)
    assert held and not any(any(states) for states in held)
    assert all(gc.is_tracked(r) and gc.is_tracked(r.events) for r in records)
    assert gc.is_tracked(records[0].attributes["x.ids"]) and gc.is_tracked(records[0].attributes)
    assert gc.is_tracked(records[0].events[0])
    assert traces == list(build_traces(records))  # the same traces
    assert len(traces) == 2


@native
def test_collections_while_owned_spans_are_held_change_nothing() -> None:
    records = _otlp_structs.decode_line(_line(_BASE), _LOCATION)
    assert records is not None

    def feed() -> Any:
        for record in records:
            yield record
            gc.collect()  # every generation, with the held spans untracked

    traces = list(stream_traces(feed(), window=2, owned=True))
    gc.collect()
    assert traces == list(build_traces(records, window=2))
    assert all(gc.is_tracked(r) for r in records)


@native
def test_build_traces_leaves_the_callers_spans_to_the_collector() -> None:
    _, held, traces = _held_states(owned=False)
    assert all(states[0] for states in held)  # records, events lists and lists: tracked
    assert len(traces) == 2


@native
def test_untrack_and_retrack_leave_other_objects_alone() -> None:
    speedups = _native.speedups
    assert speedups is not None
    other = [object(), {"a": []}, "text", None]
    speedups.untrack(other)
    speedups.untrack(other[1])
    speedups.retrack(other)
    assert gc.is_tracked(other) and gc.is_tracked(other[1])
    with pytest.raises(TypeError):
        speedups.retrack((SpanRecord(TRACE_A, "1" * 16, None, "n", 0, 1),))
