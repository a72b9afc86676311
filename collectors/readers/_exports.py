"""Stored OTLP trace exports as they were sent: for re-sending them, not for analysis.

:func:`read_exports` reads the same inputs as :func:`~._files.read_records` (OTLP-JSON lines,
OTLP protobuf, gzip, directories, the receiver's folder, ``-``) but yields each export as an
``ExportTraceServiceRequest`` message, whole: every field of every span (events, links,
status, kind, flags, trace state, dropped counts) and of its resource and scope is kept, so
a re-export is the export that was stored. Bad input is reported in the :class:`ReadReport`
with file and line and skipped, as the record readers do: an invalid export, a torn write
(the exports beside it on the line are kept), invalid text (replaced with U+FFFD and
reported). Log exports are counted in ``report.log_records`` and not yielded; a
trace-model (τ) file holds no export and is reported once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import orjson
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from groundtrace.collectors.errors import TraceReadError

from ._files import (
    _STREAM_ERRORS,
    STDIN,
    ReadReport,
    _from_file,
    _peek,
    _sniff,
    _suffix_kind,
    _unwrapped,
    iter_input_files,
)
from ._model_lines import is_model_line
from ._otlp_proto import FrameError, iter_frames
from ._repair import EXPORT_START, REPLACED, parse_pieces, path_text

if TYPE_CHECKING:
    import os

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

__all__ = ["read_exports"]

#: The top-level keys of an OTLP/JSON logs export (both spellings the receivers accept).
_LOGS_KEYS: Final = frozenset({"resourceLogs", "resource_logs"})
_EXPORT_KEYS: Final = _LOGS_KEYS | {"resourceSpans", "resource_spans"}

_NOT_OTLP: Final = (
    "a trace-model (τ) file holds no OTLP export to send (send the OTLP files it was made from)"
)


def read_exports(
    paths: Iterable[str | os.PathLike[str]], *, report: ReadReport
) -> Iterator[ExportTraceServiceRequest]:
    """Stream the stored trace exports of files, directories or ``-``, whole.

    Each yielded request holds at least one span, its ids checked (16-byte trace ids, 8-byte
    span ids). ``report`` counts files, exports (``records``), spans and log records and
    collects every error with its file and line (for protobuf: the message index).

    Raises:
        TraceReadError: a path does not exist.
    """
    for name in iter_input_files(paths):
        report.files.append(name)
        if name == STDIN:
            yield from _Exports("<stdin>", report).read(sys.stdin.buffer, None)
            continue
        reader = _Exports(name, report, _suffix_kind(Path(name)))
        yield from _from_file(reader, lambda exports, handle: exports.read(handle, exports.kind))


class _Exports:
    """The exports of one input, its errors reported."""

    def __init__(self, name: str, report: ReadReport, kind: str | None = None) -> None:
        self.name = name
        self.report = report
        self.kind = kind  # by the file's suffix (None: by its content)

    def error(self, message: str, line: int | None, where: str | None = None) -> None:
        self.report.errors.append(TraceReadError(message, path=self.name, line=line, field=where))

    def read(self, stream: IO[bytes], kind: str | None) -> Iterator[ExportTraceServiceRequest]:
        stream = _unwrapped(stream)
        head = _peek(stream, 64)
        if not head:
            return
        if (kind or _sniff(head)) == "json":
            yield from self._lines(stream)
        else:
            yield from self._frames(stream)

    def _lines(self, stream: IO[bytes]) -> Iterator[ExportTraceServiceRequest]:
        number = 0
        try:
            for number, line in enumerate(stream, start=1):
                if line.isspace():
                    continue
                if is_model_line(line):
                    self.error(_NOT_OTLP, number)
                    return
                yield from self._line(line, number)
        except _STREAM_ERRORS as exc:
            self.error(f"cannot read further: {exc}", number + 1)

    def _line(self, line: bytes, number: int) -> Iterator[ExportTraceServiceRequest]:
        try:
            objects: list[Any] = [orjson.loads(line)]
        except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
            pieces = parse_pieces(line, EXPORT_START)
            if not any(p.error is None for p in pieces):
                self.error(f"invalid JSON: {exc}", number)
                return
            objects = []
            for piece in pieces:
                if piece.error is not None:
                    self.error(
                        f"torn export at characters {piece.start + 1}-{piece.end} "
                        f"(a write cut short?): invalid JSON: {piece.error}; skipped",
                        number,
                    )
                    continue
                for path in piece.repaired:
                    self.error(REPLACED, number, path_text(path))
                objects.append(piece.value)
        for obj in objects:
            request = self._export(obj, number)
            if request is not None:
                yield request

    def _export(self, obj: Any, number: int) -> ExportTraceServiceRequest | None:
        from groundtrace.collectors.receiver import (
            BodyDecodeError,
            parse_json_request,
            validate_request,
        )

        keys = obj.keys() & _EXPORT_KEYS if isinstance(obj, dict) else set()
        if not keys:
            self.error("not an OTLP export (no resourceSpans or resourceLogs)", number)
            return None
        if keys <= _LOGS_KEYS:
            self.report.records += 1
            self.report.log_records += _json_log_count(obj)
            return None
        try:
            request = parse_json_request(orjson.dumps(obj))
            spans = validate_request(request)
        except BodyDecodeError as exc:
            self.error(str(exc), number)
            return None
        return self._counted(request, spans)

    def _counted(
        self, request: ExportTraceServiceRequest, spans: int
    ) -> ExportTraceServiceRequest | None:
        self.report.records += 1
        self.report.spans += spans
        return request if spans else None

    def _frames(self, stream: IO[bytes]) -> Iterator[ExportTraceServiceRequest]:
        from groundtrace.collectors.receiver import (
            BodyDecodeError,
            parse_protobuf_request,
            validate_request,
        )

        index = 0
        try:
            for index, data in enumerate(iter_frames(stream, stream.read(1)), start=1):
                try:
                    request = parse_protobuf_request(data)
                    spans = validate_request(request)
                except BodyDecodeError as exc:
                    if not self._logs(data):
                        self.error(f"message {index}: {exc}", index)
                    continue
                if not spans and self._logs(data):
                    continue
                if not request.resource_spans and data:
                    self.error(f"message {index}: not an OTLP trace or logs export", index)
                    continue
                counted = self._counted(request, spans)
                if counted is not None:
                    yield counted
        except FrameError as exc:
            self.error(f"broken protobuf framing after message {index}: {exc}", index + 1)
        except _STREAM_ERRORS as exc:
            self.error(f"cannot read further: {exc}", index + 1)

    def _logs(self, data: bytes) -> bool:
        """Whether the message is a logs export (then counted)."""
        logs = ExportLogsServiceRequest()
        try:
            logs.ParseFromString(data)
        except (DecodeError, RuntimeWarning, ValueError):
            return False
        count = sum(len(s.log_records) for r in logs.resource_logs for s in r.scope_logs)
        if count:
            self.report.records += 1
            self.report.log_records += count
        return count > 0


def _json_log_count(obj: dict[str, Any]) -> int:
    return sum(
        len(scope.get("logRecords") or scope.get("log_records") or [])
        for resource in obj.get("resourceLogs") or obj.get("resource_logs") or []
        if isinstance(resource, dict)
        for scope in resource.get("scopeLogs") or resource.get("scope_logs") or []
        if isinstance(scope, dict)
    )
