"""Readers: OTLP trace files into span records (and τ files into traces), streaming and with
bounded memory.

Accepted inputs:

* **OTLP-JSON lines** -- the OpenTelemetry Collector file-exporter format: one
  ``ExportTraceServiceRequest`` per line in the OTLP/JSON encoding (lowerCamelCase, hex ids,
  string int64s, integer enums). Base64 ids, numeric int64s and enum names are accepted too.
* **OTLP protobuf** -- a stream of varint length-delimited ``ExportTraceServiceRequest``
  messages, or one bare message filling the file (a file whose first byte is ``0x0A``).
* **gzip** variants of both (recognised by magic bytes), **directories** (recursive, sorted,
  known suffixes only) and ``-`` for **stdin**.
* **OTLP log records** in either encoding (an ``ExportLogsServiceRequest`` per line or
  message, in the same files or their own): GenAI events sent as logs. :func:`read_traces`
  joins each to the span it names, as an event of that span; a record without a trace id
  and span id cannot be joined and is reported as an error, one naming a span its trace does
  not have becomes an ``orphan_log`` finding. A ``gen_ai.evaluation.result`` record identical
  to an earlier one on the same span (a result written back twice) is joined once.
* **Trace-model (τ) JSON lines** (:func:`read_traces` only) -- what ``traces convert`` and
  ``collect phoenix --out`` write: a file (or stdin) whose first non-blank line is a JSON
  object with ``model_version`` holds one :class:`~groundtrace.collectors.model.Trace` a line,
  used as written; a bad line is an error naming file, line and field.

:func:`read_exports` reads the same OTLP inputs as stored, one ``ExportTraceServiceRequest``
per export with every field (links, flags, dropped counts...), for sending them on
(``groundtrace traces send``); the others decode spans for analysis.

Bad input never stops a read when a :class:`ReadReport` is passed: each bad line, message
or span becomes a :class:`~groundtrace.collectors.errors.TraceReadError` with the file and
line (for protobuf: the 1-based message index) in ``report.errors``, and everything valid is
still read. Without a report the first error is raised. Only malformed ids reject a span: a
span with another malformed field (an attribute, a timestamp, the kind, the status, an
event) is kept without that field, and its trace carries a ``malformed_field`` finding
naming the file, line and field.

Damage that real processes leave in JSON lines costs only what is damaged:

* a string with an invalid UTF-8 byte or a lone surrogate escape (``"\\ud800"``) is read with
  U+FFFD in their place and kept, and reported as an error naming file, line and field
  (for an attribute, its entry in ``attributes`` and its key); in a span or a τ line it is
  also a ``malformed_field`` finding of the trace. Every other value of the line is read as
  usual (OTLP spans, OTLP log records and τ lines alike);
* a torn export (a write cut short), alone on its line or glued to the next export on the
  same line (as an appending writer restarted after a kill leaves it), is reported (file,
  line, characters) and skipped; reading resumes at the next ``{"resourceSpans"`` or
  ``{"resourceLogs"`` of the line, so the exports after it are read.

Usage::

    from groundtrace.collectors.readers import ReadReport, read_traces

    report = ReadReport()
    traces = list(read_traces(["traces/", "more.jsonl.gz"], report=report))
"""

from __future__ import annotations

from ._exports import read_exports
from ._files import (
    JSON_SUFFIXES,
    PROTO_SUFFIXES,
    ReadReport,
    iter_input_files,
    read_records,
    read_spans,
    read_traces,
)

__all__ = [
    "JSON_SUFFIXES",
    "PROTO_SUFFIXES",
    "ReadReport",
    "iter_input_files",
    "read_exports",
    "read_records",
    "read_spans",
    "read_traces",
]
