"""Damage that real processes leave in trace files costs only the damaged value or write.

* one invalid UTF-8 byte or lone surrogate escape in one value: that value is read with
  U+FFFD, reported (file, line, field) and becomes a ``malformed_field`` finding; every other
  span of the line is read;
* a torn write (a process killed mid-write), alone on its line or glued to the next run's
  first export on the same line: the fragment is reported and skipped, the exports after it
  are read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import TraceReadError
from groundtrace.collectors import ReadReport, Trace, read_spans, read_traces
from groundtrace.collectors.readers import read_records
from groundtrace.collectors.readers._repair import parse_pieces
from groundtrace.collectors.spans import LogRecord
from groundtrace.sdk import semconv as sc
from tests.support.otlp_spans import SpanSpec, request_json, sid

MARK = "MARKER"
SPAN_41 = "resourceSpans[0].scopeSpans[0].spans[41]"
TRACE = "0af7651916cd43dd8448eb211c80319c"
#: How each kind of damage is spelled in the bytes of a line, and what it reads as.
DAMAGE = {
    "invalid byte": (b"\xff", "\ufffd"),
    "cut multi-byte character": (b"\xe2\x82", "\ufffd\ufffd"),
    "lone high surrogate escape": (b"\\ud800", "\ufffd"),
    "lone low surrogate escape": (b"\\udc80", "\ufffd"),
}


def _spans(n: int, trace_id: str = TRACE, first: int = 1) -> list[SpanSpec]:
    """``n`` spans of one trace: a root and its children, each with two attributes."""
    root = sid(first)
    return [
        SpanSpec(
            sid(first + i),
            None if i == 0 else root,
            f"step {i}",
            1000 + i,
            2000 + i,
            {"note": f"span {i}", "n": i},
            trace_id=trace_id,
        )
        for i in range(n)
    ]


def _line(spans: list[SpanSpec]) -> bytes:
    return json.dumps(request_json(spans), separators=(",", ":")).encode()


def _damaged(line: bytes, damage: bytes) -> bytes:
    assert line.count(MARK.encode()) == 1
    return line.replace(MARK.encode(), b"x" + damage + b"y")


def _read(path: Path) -> tuple[list[Any], ReadReport]:
    report = ReadReport()
    return list(read_records([path], report=report)), report


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_bad_text_in_one_attribute_costs_only_that_value(tmp_path: Path, damage: str) -> None:
    spans = _spans(100)
    spans[41].attributes["note"] = MARK
    spans[42].attributes["note"] = "\U0001f600"  # written as a (valid) surrogate pair escape
    raw, replacement = DAMAGE[damage]
    path = tmp_path / "t.jsonl"
    path.write_bytes(_line(_spans(3, "1" * 32, 500)) + b"\n" + _damaged(_line(spans), raw) + b"\n")
    records, report = _read(path)
    assert len(records) == 103 and report.spans == 103
    by_id = {r.span_id: r for r in records}
    assert by_id[sid(42)].attributes["note"] == f"x{replacement}y"
    assert by_id[sid(43)].attributes == {"note": "\U0001f600", "n": 42}
    assert by_id[sid(44)].attributes == {"note": "span 43", "n": 43}
    (error,) = report.errors
    assert (error.path, error.line, error.field) == (str(path), 2, f"{SPAN_41}.attributes[0]")
    assert "'note'" in error.reason and "U+FFFD" in error.reason
    (bad,) = by_id[sid(42)].bad_fields
    assert bad.field == f"{SPAN_41}.attributes[0]"
    assert all(not r.bad_fields for r in records if r.span_id != sid(42))

    traces = {t.trace_id: t for t in read_traces([path], report=ReadReport())}
    assert len(traces[TRACE].steps) == 100 and len(traces["1" * 32].steps) == 3
    (finding,) = traces[TRACE].findings_of("malformed_field")
    assert finding.location == f"{path}:2" and finding.span_id == sid(42)
    assert finding.field == f"{SPAN_41}.attributes[0]" and "'note'" in finding.message


def test_bad_text_outside_span_attributes_is_reported_where_it_is(tmp_path: Path) -> None:
    spans = _spans(5)
    spans[1].name = MARK
    spans[2].events = [("retry", 1500, {"why": [MARK.lower(), "ok"]})]
    obj = request_json(spans, service=MARK.lower() * 2)
    text = json.dumps(obj).replace(MARK, "a\udcffb").replace(MARK.lower(), "c\\ud800d")
    path = tmp_path / "t.jsonl"
    path.write_bytes(text.encode("utf-8", "surrogatepass").replace(b"\xed\xb3\xbf", b"\xff"))
    records, report = _read(path)
    assert [r.span_id for r in records] == [sid(i) for i in range(1, 6)]
    assert records[1].name == "a\ufffdb"
    assert records[2].events[0].attributes["why"] == ["c\ufffdd", "ok"]
    assert all(r.resource[sc.SERVICE_NAME] == "c\ufffddc\ufffdd" for r in records)
    scope = "resourceSpans[0].scopeSpans[0]"
    assert sorted(e.field for e in report.errors if e.field) == [
        "resourceSpans[0].resource.attributes[0]",
        f"{scope}.spans[1].name",
        f"{scope}.spans[2].events[0].attributes[0]",
    ]
    assert len(report.errors) == 3 and all(e.line == 1 for e in report.errors)
    # the resource's repair is reported once and travels with every span of that resource
    assert [len(r.bad_fields) for r in records] == [1, 2, 2, 1, 1]


def test_bad_text_in_a_log_record_keeps_the_record(tmp_path: Path) -> None:
    records_json = [
        {
            "timeUnixNano": str(1500 + i),
            "traceId": TRACE,
            "spanId": sid(1),
            "eventName": sc.GENAI_EVENT_CHOICE if i else MARK,
            "body": {"stringValue": f"answer {i}"},
        }
        for i in range(3)
    ]
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": records_json}]}]}
    path = tmp_path / "t.jsonl"
    path.write_bytes(_line(_spans(2)) + b"\n" + _damaged(json.dumps(logs).encode(), b"\xc3"))
    records, report = _read(path)
    logs_read = [r for r in records if type(r) is LogRecord]
    assert [r.event_name for r in logs_read] == [
        "x\ufffdy",
        sc.GENAI_EVENT_CHOICE,
        sc.GENAI_EVENT_CHOICE,
    ]
    assert report.log_records == 3 and report.spans == 2
    (error,) = report.errors
    assert error.line == 2 and error.field == "resourceLogs[0].scopeLogs[0].logRecords[0].eventName"


def test_repair_accepts_nothing_the_json_parser_refuses(tmp_path: Path) -> None:
    """Bad text beside a literal JSON refuses (NaN, a number beyond a double): still one
    invalid line, as without the bad text."""
    path = tmp_path / "t.jsonl"
    good = _line(_spans(2))
    bad = _line(_spans(2, first=10)).replace(b'"kind":1', b'"kind":1,"x\xff":NaN', 1)
    huge = _line(_spans(2, first=20)).replace(b'"kind":1', b'"kind":1,"\\ud800":1e999', 1)
    path.write_bytes(b"\n".join([good, bad, huge, good]) + b"\n")
    records, report = _read(path)
    assert len(records) == 4
    assert [(e.line, e.reason.startswith("invalid JSON")) for e in report.errors] == [
        (2, True),
        (3, True),
    ]


def test_a_torn_last_line_then_a_new_batch_on_the_next_line(tmp_path: Path) -> None:
    first = _line(_spans(10, "1" * 32))
    torn = _line(_spans(10, "2" * 32, 100)).replace(b"span 7", "spän 7".encode())
    cut = torn.index("ä".encode()) + 1  # killed in the middle of a multi-byte character
    path = tmp_path / "t.jsonl"
    path.write_bytes(first + b"\n" + torn[:cut] + b"\n" + _line(_spans(10, "3" * 32, 200)) + b"\n")
    records, report = _read(path)
    assert sorted({r.trace_id for r in records}) == ["1" * 32, "3" * 32] and len(records) == 20
    (error,) = report.errors
    assert (error.path, error.line) == (str(path), 2) and "invalid JSON" in error.reason


@pytest.mark.parametrize("cut", [1, 40, 0.5, -2], ids=["1 byte", "40 bytes", "half", "all but 2"])
def test_a_torn_fragment_glued_to_the_next_batch_keeps_the_batch(
    tmp_path: Path, cut: float
) -> None:
    """The old file exporter appended the next run's first batch right after a torn tail."""
    torn = _line(_spans(10, "1" * 32))
    glued = _line(_spans(10, "2" * 32, 100))
    end = int(len(torn) * cut) if isinstance(cut, float) else cut
    path = tmp_path / "t.jsonl"
    line = torn[:end] + glued
    path.write_bytes(_line(_spans(2, "3" * 32, 300)) + b"\n" + line + b"\n")
    records, report = _read(path)
    assert [r.span_id for r in records if r.trace_id == "2" * 32] == [
        sid(i) for i in range(100, 110)
    ]
    assert len(records) == 12 and report.records == 2
    (error,) = report.errors
    assert (error.path, error.line) == (str(path), 2)
    chars = len(torn[:end].decode())
    assert f"torn export at characters 1-{chars}" in error.reason and "skipped" in error.reason


def test_torn_fragments_around_glued_batches_of_spans_and_logs(tmp_path: Path) -> None:
    spans = _line(_spans(4, "1" * 32))
    logs = json.dumps(
        {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": TRACE, "spanId": sid(1)}]}]}]}
    ).encode()
    more = _line(_spans(3, "2" * 32, 50))
    damaged = _damaged(_line(_spans(3, "4" * 32, 70)).replace(b"span 1", MARK.encode()), b"\xff")
    line = spans[:30] + logs + more[:-5] + damaged + spans[:20]
    path = tmp_path / "t.jsonl"
    path.write_bytes(line + b"\n")
    records, report = _read(path)
    assert [type(r).__name__ for r in records] == ["LogRecord"] + ["SpanRecord"] * 3
    assert [r.attributes["note"] for r in records[1:]] == ["span 0", "x\ufffdy", "span 2"]
    assert [(e.line, e.reason.split(" (")[0]) for e in report.errors] == [
        (1, "torn export at characters 1-30"),
        (1, f"torn export at characters {31 + len(logs)}-{30 + len(logs) + len(more) - 5}"),
        (1, "attribute 'note': value: " + "invalid UTF-8 or a lone surrogate replaced with U+FFFD"),
        (1, f"torn export at characters {len(line) - 19}-{len(line)}"),
    ]


def test_a_trace_model_line_with_bad_text_keeps_its_trace(tmp_path: Path) -> None:
    otlp = tmp_path / "t.jsonl"
    otlp.write_bytes(_line(_spans(3, "1" * 32)) + b"\n" + _line(_spans(4, "2" * 32, 10)) + b"\n")
    lines = [t.to_json().encode() for t in read_traces([otlp])]
    spans = tmp_path / "tau.jsonl"
    damaged = lines[0].replace(b'"span 1"', b'"span \xff1"').replace(b'"span 2"', b'"\\udfff"')
    spans.write_bytes(damaged + b"\n" + lines[1] + b"\n")
    report = ReadReport()
    traces = list(read_traces([spans], report=report))
    assert [t.trace_id for t in traces] == ["1" * 32, "2" * 32]
    assert traces[1] == Trace.from_json(lines[1])
    attributes = [s.attributes for s in traces[0].steps]
    assert [a["note"] for a in attributes] == ["span 0", "span \ufffd1", "\ufffd"]
    findings = traces[0].findings_of("malformed_field")
    assert [(f.field, f.span_id, f.location) for f in findings] == [
        ("steps[1].attributes.note", sid(2), f"{spans}:1"),
        ("steps[2].attributes.note", sid(3), f"{spans}:1"),
    ]
    assert [(e.line, e.field) for e in report.errors] == [
        (1, "steps[1].attributes.note"),
        (1, "steps[2].attributes.note"),
    ]


def test_summary_reads_past_bad_text_and_strict_still_fails(tmp_path: Path) -> None:
    spans = _spans(100)
    spans[41].attributes["note"] = MARK
    path = tmp_path / "t.jsonl"
    path.write_bytes(_damaged(_line(spans), b"\xff") + b"\n")
    runner = CliRunner()
    app = build_app()
    lenient = runner.invoke(app, ["traces", "summary", str(path), "--json"])
    assert lenient.exit_code == 0, lenient.output
    data = json.loads(lenient.stdout)
    assert (data["traces"], data["spans"], data["findings_by_kind"]["malformed_field"]) == (
        1,
        100,
        1,
    )
    (error,) = data["read_errors"]
    assert (error["path"], error["line"], error["field"]) == (
        str(path),
        1,
        f"{SPAN_41}.attributes[0]",
    )
    strict = runner.invoke(app, ["traces", "summary", str(path), "--strict"])
    assert strict.exit_code == TraceReadError.exit_code
    assert "t.jsonl:1" in strict.stderr


def test_without_a_report_a_repaired_value_raises(tmp_path: Path) -> None:
    """Without a report every problem raises, a repaired value included (fail closed)."""
    spans = _spans(3)
    spans[1].attributes["note"] = MARK
    path = tmp_path / "t.jsonl"
    path.write_bytes(_damaged(_line(spans), b"\xff") + b"\n")
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert (
        info.value.line == 1
        and info.value.field == "resourceSpans[0].scopeSpans[0].spans[1].attributes[0]"
    )


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    _JSON_VALUES,
    st.lists(
        st.tuples(st.integers(0, 10**4), st.sampled_from(list('{}[]",:0e.-N \\'))), max_size=3
    ),
)
def test_the_repair_parser_accepts_what_orjson_accepts(
    value: Any, edits: list[tuple[int, str]]
) -> None:
    """On text without invalid UTF-8 or lone surrogates, the repair path reads exactly what
    orjson reads (and refuses what it refuses): the repair never widens what is accepted."""
    text = json.dumps(value, ensure_ascii=False)  # NaN/Infinity literals included
    for where, char in edits:
        pos = where % (len(text) + 1)
        text = text[:pos] + char + text[pos:]
    line = text.encode("utf-8", "surrogatepass")
    try:
        expected = ("ok", orjson.loads(line))
    except orjson.JSONDecodeError:
        expected = ("refused", None)
    pieces = parse_pieces(line)
    if any(p.repaired for p in pieces):  # the text itself holds a surrogate: not this property
        return
    got = (
        ("ok", pieces[0].value)
        if len(pieces) == 1 and pieces[0].error is None
        else ("refused", None)
    )
    assert got == expected
