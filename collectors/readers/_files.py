"""Files, directories, gzip and stdin: streaming span sources with error collection."""

from __future__ import annotations

import gzip
import itertools
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Protocol, TypeVar

import orjson

from groundtrace.collectors.errors import TraceReadError
from groundtrace.collectors.model import Trace
from groundtrace.collectors.normalize import DEFAULT_MAX_PENDING_SPANS, DEFAULT_WINDOW, build_traces
from groundtrace.collectors.spans import BadField, LogRecord, SourceLocation, SpanRecord

from ._losses import is_rejected_span, lost_in, mark_incomplete, span_trace_id
from ._model_lines import is_model_line, read_model_lines
from ._otlp_json import SpanDecodeError, decode_request
from ._otlp_logs import LOGS_KEY, decode_frame, decode_logs_request
from ._otlp_proto import FrameError, iter_frames
from ._otlp_structs import decode_line
from ._repair import EXPORT_START, otlp_notes, parse_pieces

_JSON_ERRORS: Final = (orjson.JSONDecodeError, UnicodeDecodeError)
_T = TypeVar("_T")

__all__ = [
    "JSON_SUFFIXES",
    "PROTO_SUFFIXES",
    "ReadReport",
    "iter_input_files",
    "read_records",
    "read_spans",
    "read_traces",
]

#: File suffixes read as OTLP-JSON lines when found in a directory (plus ``.gz`` variants).
JSON_SUFFIXES: Final = frozenset({".json", ".jsonl", ".ndjson"})
#: File suffixes read as OTLP protobuf when found in a directory (plus ``.gz`` variants).
PROTO_SUFFIXES: Final = frozenset({".pb", ".binpb", ".protobuf", ".otlp"})
STDIN: Final = "-"
_GZIP_MAGIC: Final = b"\x1f\x8b"
_WHITESPACE: Final = b" \t\r\n"
#: How OTLP/JSON export lines begin (``resourceSpans`` / ``resourceLogs``, any casing style).
_OTLP_START: Final = b'{"resource'
#: Read buffer of plain files. An OTLP/JSON line holds a whole export batch
#: (often hundreds of KB); with the default 8 KB buffer every line is gathered from many
#: reads and joined, and reading lines took about 3x as long (about 5% of building τ).
_READ_BUFFER: Final = 4 << 20
_STREAM_ERRORS: Final = (OSError, EOFError, zlib.error)


@dataclass(slots=True)
class ReadReport:
    """What a read saw: files, counts and every error (filled in while reading).

    Pass one to :func:`read_spans` / :func:`read_traces` to keep reading past bad input;
    without it the first error is raised.
    """

    files: list[str] = field(default_factory=list)
    records: int = 0
    spans: int = 0
    #: log records read (GenAI events sent as logs; joined to their spans)
    log_records: int = 0
    errors: list[TraceReadError] = field(default_factory=list)
    #: traces some of whose spans were on input that could not be read: trace id ->
    #: ``file:line`` of the first such loss (the ids are recovered from the damaged bytes)
    lost_traces: dict[str, str] = field(default_factory=dict)
    #: losses whose trace ids could not be recovered, as ``(file, line)``: the traces with
    #: spans on the neighbouring lines of that file are marked incomplete
    lost_unknown: list[tuple[str, int]] = field(default_factory=list)
    #: the case ids recovered with :attr:`lost_traces`: trace id -> case id
    lost_case_ids: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether no error was seen."""
        return not self.errors


def _suffix_kind(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    last = suffixes[-1] if suffixes else ""
    if last in JSON_SUFFIXES:
        return "json"
    if last in PROTO_SUFFIXES:
        return "proto"
    return None


def iter_input_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[str]:
    """Expand paths: files as given, directories recursively in sorted order, ``-`` for stdin.

    In directories only files with a known suffix (see :data:`JSON_SUFFIXES`,
    :data:`PROTO_SUFFIXES`, each optionally followed by ``.gz``) are read; hidden files and
    directories are skipped.

    Raises:
        TraceReadError: a path does not exist.
    """
    for raw in paths:
        text = os.fspath(raw)
        if text == STDIN:
            yield STDIN
            continue
        path = Path(text)
        if path.is_dir():
            found: list[str] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(
                    os.path.join(root, f)
                    for f in files
                    if not f.startswith(".") and _suffix_kind(Path(f)) is not None
                )
            yield from sorted(found)
        elif path.is_file():
            yield text
        else:
            raise TraceReadError("no such file or directory", path=text)


class _Reader:
    """Reads one input and collects (or raises) its errors."""

    def __init__(self, name: str, report: ReadReport | None) -> None:
        self.name = name
        self.report = report

    def error(self, message: str, line: int | None, where: str | None = None) -> None:
        err = TraceReadError(message, path=self.name, line=line, field=where)
        if self.report is None:
            raise err
        self.report.errors.append(err)

    def decode_errors(self, errors: list[SpanDecodeError], line: int, obj: object = None) -> None:
        for exc in errors:
            self.error(str(exc), line, exc.where)
            if is_rejected_span(exc.where):
                trace_id = span_trace_id(obj, exc.where)
                self.lost({trace_id: None} if trace_id else {}, line)

    def lost(self, traces: Mapping[str, str | None], line: int | None) -> None:
        """Record spans lost at ``line``: of these traces (with their case ids, where
        known), or of unknown ones."""
        report = self.report
        if report is None:
            return
        if not traces:
            report.lost_unknown.append((self.name, line or 0))
        where = f"{self.name}:{line}" if line is not None else self.name
        for trace_id, case_id in traces.items():
            report.lost_traces.setdefault(trace_id, where)
            if case_id is not None:
                report.lost_case_ids.setdefault(trace_id, case_id)

    def count(self, records: list[SpanRecord] | list[LogRecord]) -> None:
        report = self.report
        if report is not None:
            report.records += 1
            if records and type(records[0]) is LogRecord:
                report.log_records += len(records)
            else:
                report.spans += len(records)

    def spans(self, stream: IO[bytes], kind: str | None) -> Iterator[SpanRecord | LogRecord]:
        stream = _unwrapped(stream)
        head = _peek(stream, 64)
        if not head:
            return
        if kind is None:
            kind = _sniff(head)
        if kind == "json":
            yield from self.json_lines(enumerate(stream, start=1))
        else:
            yield from self._proto(stream)

    def traces(self, lines: Iterable[tuple[int, bytes]]) -> Iterator[Trace]:
        """The traces of numbered τ lines (each bad line reported with its field)."""
        try:
            yield from read_model_lines(lines, self.error, self.count_trace, self.name)
        except _STREAM_ERRORS as exc:
            self.error(f"cannot read further: {exc}", None)

    def count_trace(self) -> None:
        if self.report is not None:
            self.report.records += 1

    def json_lines(self, lines: Iterable[tuple[int, bytes]]) -> Iterator[SpanRecord | LogRecord]:
        name = self.name
        number = 0
        try:
            for number, line in lines:
                if line.isspace():  # a blank line (strip() would copy the whole line)
                    continue
                location = SourceLocation(name, number)
                records = None if LOGS_KEY in line else decode_line(line, location)
                if records is None:  # not the canonical shape: the checked decoder decides
                    try:
                        obj = orjson.loads(line)
                    except _JSON_ERRORS as exc:
                        yield from self.salvaged(line, location, f"invalid JSON: {exc}")
                        continue
                    yield from self.export(obj, location, raw=line)
                    continue
                self.count(records)
                yield from records
        except _STREAM_ERRORS as exc:
            self.error(f"cannot read further: {exc}", number + 1)
            self.lost({}, number + 1)

    def export(
        self,
        obj: object,
        location: SourceLocation,
        notes: Mapping[str, Sequence[BadField]] | None = None,
        *,
        raw: bytes = b"",
    ) -> list[SpanRecord] | list[LogRecord]:
        """The records of one export object (spans, or log records), its errors reported
        (``raw``: its text, for the trace ids of spans lost with a rejected export)."""
        number = location.line or 0
        errors: list[SpanDecodeError] = []
        records: list[SpanRecord] | list[LogRecord]
        logs = isinstance(obj, dict) and "resourceLogs" in obj and "resourceSpans" not in obj
        try:
            if logs:
                records = decode_logs_request(obj, location, errors, notes)
            else:
                records = decode_request(obj, location, errors, notes)
        except SpanDecodeError as exc:
            self.error(str(exc), number, exc.where)
            if not logs:
                self.lost(lost_in(raw), number)
            return []
        self.decode_errors(errors, number, None if logs else obj)
        self.count(records)
        return records

    def salvaged(
        self, line: bytes, location: SourceLocation, failure: str
    ) -> Iterator[SpanRecord | LogRecord]:
        """What can be read of a line the JSON parser refused (see :mod:`._repair`): its
        exports with invalid text replaced (each replacement reported), and every torn
        fragment reported. A line with nothing readable is reported as ``failure``."""
        number = location.line or 0
        pieces = parse_pieces(line, EXPORT_START)
        if not any(p.error is None for p in pieces):
            self.error(failure, number)
            if LOGS_KEY not in line or b"resourceSpans" in line:
                self.lost(lost_in(line), number)
            return
        for piece in pieces:
            text = line[piece.start : piece.end]
            if piece.error is not None:
                self.error(
                    f"torn export at characters {piece.start + 1}-{piece.end} "
                    f"(a write cut short?): invalid JSON: {piece.error}; skipped",
                    number,
                )
                if LOGS_KEY not in text:
                    self.lost(lost_in(text), number)
                continue
            notes = otlp_notes(piece.value, piece.repaired) if piece.repaired else None
            yield from self.export(piece.value, location, notes, raw=text)

    def _proto(self, stream: IO[bytes]) -> Iterator[SpanRecord | LogRecord]:
        index = 0
        try:
            first = stream.read(1)
            for index, data in enumerate(iter_frames(stream, first), start=1):
                errors: list[SpanDecodeError] = []
                try:
                    records = decode_frame(data, SourceLocation(self.name, index), errors)
                except SpanDecodeError as exc:
                    self.error(f"message {index}: {exc}", index, exc.where)
                    self.lost({}, index)
                    continue
                self.decode_errors(errors, index)
                self.count(records)
                yield from records
        except FrameError as exc:
            self.error(f"broken protobuf framing after message {index}: {exc}", index + 1)
            self.lost({}, index + 1)
        except _STREAM_ERRORS as exc:
            self.error(f"cannot read further: {exc}", index + 1)
            self.lost({}, index + 1)


def _unwrapped(stream: IO[bytes]) -> IO[bytes]:
    """The stream, decompressed when it starts with the gzip magic bytes."""
    if _peek(stream, 2).startswith(_GZIP_MAGIC):
        # not re-buffered: a BufferedReader over it would lose the lines read before a
        # truncated stream's EOFError
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream


def _first_line(stream: IO[bytes]) -> tuple[int, bytes] | None:
    """The number and text of the first non-blank line of a JSON stream (``None``: none, or
    not JSON text; the stream is then left as it was)."""
    if _sniff(_peek(stream, 64) or b"\x00") != "json":
        return None
    try:
        for number, line in enumerate(stream, start=1):
            if not line.isspace():
                return number, line
    except _STREAM_ERRORS:
        return None
    return None


def _peek(stream: IO[bytes], n: int) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is None:  # pragma: no cover - every stream we open is buffered
        raise TypeError("stream must support peek()")
    try:
        data: bytes = peek(n)
    except _STREAM_ERRORS:
        return b"\x00"  # unreadable: let the protobuf path report the stream error
    return data[:n]


def _sniff(head: bytes) -> str:
    """JSON when the first non-whitespace byte is ``{`` and the head is text; else protobuf."""
    if head[:1] == b"{":
        return "json"
    stripped = head.lstrip(_WHITESPACE)
    if stripped[:1] == b"{":
        try:
            head.decode("utf-8")
        except UnicodeDecodeError:
            return "proto"
        return "json"
    return "proto"


def read_spans(
    paths: Iterable[str | os.PathLike[str]], *, report: ReadReport | None = None
) -> Iterator[SpanRecord]:
    """Stream every span of the given files, directories or ``-`` (stdin); log records in
    them are counted in ``report`` and left out (:func:`read_traces` joins them to their
    spans). See :func:`read_records` for the formats."""
    for record in read_records(paths, report=report):
        if type(record) is SpanRecord:
            yield record


def read_records(
    paths: Iterable[str | os.PathLike[str]], *, report: ReadReport | None = None
) -> Iterator[SpanRecord | LogRecord]:
    """Stream every span and every log record of the given files, directories or ``-``.

    A line (or protobuf message) is an OTLP traces export or an OTLP logs export
    (``resourceLogs``); log records without a trace id and span id cannot be joined to a
    span and are reported as errors.

    Format is decided per file: by suffix (``.json``/``.jsonl``/``.ndjson`` vs
    ``.pb``/``.binpb``/``.protobuf``/``.otlp``, optionally ``.gz``), else by content.
    Gzip is recognised by its magic bytes whatever the name.

    Args:
        paths: files, directories (read recursively, sorted) or ``-``.
        report: collects files, counts and errors; with it, bad lines and spans are
            reported and skipped while everything valid is still read. Without it, the
            first problem raises.

    Raises:
        TraceReadError: a path is missing, or (without ``report``) any input is bad.
    """
    for name in iter_input_files(paths):
        if report is not None:
            report.files.append(name)
        if name == STDIN:
            reader = _Reader("<stdin>", report)
            yield from reader.spans(sys.stdin.buffer, None)
            continue
        yield from _file_records(name, report)


def _file_records(name: str, report: ReadReport | None) -> Iterator[SpanRecord | LogRecord]:
    kind = _suffix_kind(Path(name))
    return _from_file(_Reader(name, report), lambda reader, handle: reader.spans(handle, kind))


def read_traces(
    paths: Iterable[str | os.PathLike[str]],
    *,
    report: ReadReport | None = None,
    window: int = DEFAULT_WINDOW,
    max_pending_spans: int | None = DEFAULT_MAX_PENDING_SPANS,
) -> Iterator[Trace]:
    """Stream traces (τ) from files, log records joined to their spans; see
    :func:`read_records` and :func:`build_traces`.

    A file (or stdin) whose first non-blank line is a trace-model object (it has
    ``model_version``: what ``traces convert`` and ``collect phoenix --out`` write) is read
    as τ JSON lines, one trace a line, each checked by the model's strict decoder; its traces
    come first, as each such file is met, then the traces built from every OTLP input
    together (so spans and log records in different files are joined). A bad τ line is a
    :class:`~groundtrace.collectors.errors.TraceReadError` naming file, line and field.
    """
    return _traces(list(iter_input_files(paths)), report, window, max_pending_spans)


def _traces(
    names: list[str], report: ReadReport | None, window: int, max_pending_spans: int | None
) -> Iterator[Trace]:
    otlp: list[Iterator[SpanRecord | LogRecord]] = []
    for name in names:
        if report is not None:
            report.files.append(name)
        if name == STDIN:
            reader = _Reader("<stdin>", report)
            stream = _unwrapped(sys.stdin.buffer)
            first = _first_line(stream)
            if first is None:
                otlp.append(reader.spans(stream, None))
                continue
            lines = itertools.chain([first], enumerate(stream, start=first[0] + 1))
            if is_model_line(first[1]):
                yield from reader.traces(lines)
            else:
                otlp.append(reader.json_lines(lines))
            continue
        if _holds_traces(name):
            yield from _model_file(name, report)
        else:
            otlp.append(_file_records(name, report))
    records = itertools.chain.from_iterable(otlp)
    traces = build_traces(records, window=window, max_pending_spans=max_pending_spans)
    yield from traces if report is None else mark_incomplete(traces, report)


def _holds_traces(name: str) -> bool:
    """Whether the file's first non-blank line is a τ object (unreadable: no, and the OTLP
    read reports why)."""
    try:
        with open(name, "rb") as handle:
            stream = _unwrapped(handle)
            if _peek(stream, 64).lstrip(_WHITESPACE).startswith(_OTLP_START):
                return False  # an OTLP export: its (often large) first line is not read twice
            first = _first_line(stream)
    except _STREAM_ERRORS:
        return False
    return first is not None and is_model_line(first[1])


def _model_file(name: str, report: ReadReport | None) -> Iterator[Trace]:
    return _from_file(
        _Reader(name, report),
        lambda reader, handle: reader.traces(enumerate(_unwrapped(handle), 1)),
    )


class FileReader(Protocol):
    """A reader of one named input that reports its errors (file, line, field)."""

    name: str

    def error(self, message: str, line: int | None, where: str | None = None) -> None:
        """Report (or raise) a read error of this input."""


_R = TypeVar("_R", bound=FileReader)


def _from_file(reader: _R, read: Callable[[_R, IO[bytes]], Iterator[_T]]) -> Iterator[_T]:
    """What ``read`` yields from ``reader``'s opened file (an open error reported, nothing
    read)."""
    try:
        # closed in the finally below (generator-safe)
        handle = open(reader.name, "rb", buffering=_READ_BUFFER)  # noqa: SIM115
    except OSError as exc:
        reader.error(f"cannot open: {exc.strerror}", None)
        return
    try:
        yield from read(reader, handle)
    finally:
        handle.close()
