"""Spans lost to a damaged line make exactly their traces incomplete, never another's.

An exporter writes a batch of spans a line; a trace's spans may be spread over several lines
(children end, and are exported, before their parent). When one line cannot be read, the
traces with spans on it are built from what remains and look whole: a lost tool call reads as
"no tool call ran", a lost answer as an empty answer. The readers recover the trace ids
written in the damaged bytes and give those traces a ``lost_spans`` finding, so that every
analysis calls them incomplete (:attr:`Trace.incomplete`); the other traces are unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from groundtrace.collectors import ReadReport, read_traces
from groundtrace.collectors.model import FindingKind
from tests.support.otlp_spans import SpanSpec, request_json, request_proto, sid

BASE = 1_700_000_000_000_000_000


def _trace_id(n: int) -> str:
    return f"{n + 1:032x}"


def _conversation(n: int) -> list[SpanSpec]:
    """A root with a tool-call child and an answer child, in end order (children first)."""
    t, start = _trace_id(n), BASE + n * 10_000
    root = sid(n * 10 + 1)
    return [
        SpanSpec(sid(n * 10 + 2), root, "tool", start + 10, start + 20, trace_id=t),
        SpanSpec(sid(n * 10 + 3), root, "answer", start + 30, start + 40, trace_id=t),
        SpanSpec(root, None, "request", start, start + 50, trace_id=t),
    ]


def _batched(n_traces: int, per_line: int) -> list[list[SpanSpec]]:
    spans = [s for n in range(n_traces) for s in _conversation(n)]
    return [spans[i : i + per_line] for i in range(0, len(spans), per_line)]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _lines(batches: list[list[SpanSpec]]) -> list[bytes]:
    return [json.dumps(request_json(b), separators=(",", ":")).encode() for b in batches]


def _read(path: Path) -> tuple[dict[str, int], dict[str, str | None], ReadReport]:
    report = ReadReport()
    traces = list(read_traces([path], report=report))
    steps = {t.trace_id: len(t.steps) for t in traces}
    reasons = {t.trace_id: (t.incomplete.kind if t.incomplete else None) for t in traces}
    return steps, reasons, report


def test_a_damaged_line_marks_exactly_the_traces_it_held(tmp_path: Path) -> None:
    batches = _batched(12, per_line=8)  # 36 spans: lines of 8, traces straddle lines
    lines = _lines(batches)
    whole = _write(tmp_path / "whole.jsonl", lines)
    _, before, _ = _read(whole)
    assert set(before.values()) == {None}

    damaged_at = 2  # the third line
    held = {s.trace_id for s in batches[damaged_at]}
    bad = bytearray(lines[damaged_at])
    colon = bad.index(b'"name":', len(bad) // 2) + len('"name"')
    bad[colon] = ord(";")  # one wrong byte: the line is no longer JSON
    lines[damaged_at] = bytes(bad)
    steps, reasons, report = _read(_write(tmp_path / "damaged.jsonl", lines))

    assert report.errors and report.errors[0].line == damaged_at + 1
    marked = {t for t, why in reasons.items() if why is not None}
    assert marked == held  # a trace wholly on the damaged line is a trace with no span
    assert all(reasons[t] == FindingKind.LOST_SPANS for t in held)
    assert {t for t in held if steps[t] == 0} == {_trace_id(6), _trace_id(7)}
    # every other trace reads exactly as before: all three spans, no finding
    for trace_id, why in before.items():
        if trace_id not in held:
            assert steps[trace_id] == 3 and reasons[trace_id] is None


def test_a_torn_write_marks_the_traces_of_its_fragment(tmp_path: Path) -> None:
    batches = _batched(4, per_line=2)  # line 3 holds the last two spans of trace 1
    lines = _lines(batches)
    lines[2] = lines[2][: len(lines[2]) * 2 // 3] + lines[3]  # torn, glued to the next
    del lines[3]
    steps, reasons, report = _read(_write(tmp_path / "torn.jsonl", lines))
    assert "torn export" in str(report.errors[0])
    assert reasons[_trace_id(1)] == FindingKind.LOST_SPANS  # the torn fragment's trace
    assert reasons[_trace_id(2)] is None and steps[_trace_id(2)] == 3  # read after it
    assert reasons[_trace_id(0)] is None and reasons[_trace_id(3)] is None


def test_a_rejected_span_marks_its_trace_only(tmp_path: Path) -> None:
    batches = _batched(3, per_line=9)
    obj = request_json(batches[0])
    obj["resourceSpans"][0]["scopeSpans"][0]["spans"][4]["spanId"] = "not-an-id"  # trace 1
    path = tmp_path / "rejected.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    _, reasons, report = _read(path)
    assert report.errors
    assert reasons == {_trace_id(0): None, _trace_id(1): FindingKind.LOST_SPANS, _trace_id(2): None}


def test_unrecoverable_ids_mark_the_neighbouring_traces(tmp_path: Path) -> None:
    batches = _batched(4, per_line=3)  # one trace a line
    lines = _lines(batches)
    lines[1] = b"\x00garbage with no trace id at all"
    _, reasons, report = _read(_write(tmp_path / "garbage.jsonl", lines))
    assert report.lost_unknown == [(str(tmp_path / "garbage.jsonl"), 2)]
    # the traces on the lines next to the damaged one may have lost spans there
    assert reasons == {
        _trace_id(0): FindingKind.LOST_SPANS,
        _trace_id(2): FindingKind.LOST_SPANS,
        _trace_id(3): None,
    }


def test_a_lost_root_keeps_its_case_id(tmp_path: Path) -> None:
    spans = _conversation(0)
    spans[2].attributes = {"groundtrace.request.case_id": "case-7"}  # the root
    lines = _lines([spans[:2], spans[2:]])
    lines[1] = lines[1].replace(b'"name"', b'"name";', 1)  # the root's line: not JSON
    report = ReadReport()
    (trace,) = read_traces([_write(tmp_path / "root.jsonl", lines)], report=report)
    assert trace.request.case_id == "case-7"
    assert trace.incomplete is not None and trace.incomplete.kind == FindingKind.LOST_SPANS
    assert len(trace.steps) == 2


def test_a_missing_parent_is_incomplete_too(tmp_path: Path) -> None:
    spans = _conversation(0)[:2]  # the root never arrived
    path = _write(tmp_path / "orphans.jsonl", _lines([spans]))
    _, reasons, report = _read(path)
    assert report.ok
    assert reasons[_trace_id(0)] == FindingKind.ORPHAN_SPAN


def test_a_broken_protobuf_stream_marks_the_traces_around_it(tmp_path: Path) -> None:
    frames = [request_proto(b) for b in _batched(3, per_line=3)]
    blob = b""
    for frame in frames[:2]:
        blob += _varint(len(frame)) + frame
    blob += _varint(len(frames[2]) + 50) + frames[2]  # the last frame claims too much
    path = tmp_path / "broken.binpb"
    path.write_bytes(blob)
    _, reasons, report = _read(path)
    assert not report.ok
    assert reasons[_trace_id(0)] is None
    assert reasons[_trace_id(1)] == FindingKind.LOST_SPANS


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
