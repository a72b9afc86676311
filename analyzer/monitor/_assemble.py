"""Live traces put back together from the receiver's files, and when each one is complete.

The receiver writes every accepted batch as one fsync'd OTLP-JSON line before it answers 200,
so the monitor never sits on the ingest path: it reads the receiver's folder behind it
(:class:`FolderTail`, whole lines only, from where it stopped), keeps the spans of the traces
some rule may sample (:class:`Assembler`), and hands a trace over once its root span has
arrived and ``complete_after`` seconds passed without a new span of it. A trace whose root
never arrives is given up after ``give_up_after`` seconds (incomplete: never evaluated).

What is kept of a trace is its OTLP-JSON fragments, so a batch of complete traces is written
back as export lines the analyses read like any trace file (:func:`write_batch`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from groundtrace.sdk import semconv as sc

__all__ = ["Assembler", "FolderTail", "LiveTrace", "is_tau_file", "tau_trace", "write_batch"]

#: Attributes that mark a trace groundtrace itself produced (a replay, a counterfactual, an
#: evaluation): such a trace is never sampled nor counted in a production window.
EVALUATION_MARKERS = (sc.GT_REPLAY_OF, sc.GT_ORIGIN)
#: The trace ids of an OTLP-JSON line, found without decoding it.
TRACE_IDS = re.compile(rb'"traceId"\s*:\s*"([0-9a-fA-F]{32})"')


def _value(v: dict[str, Any]) -> Any:
    """The Python value of an OTLP-JSON ``AnyValue`` (scalars; anything else as given)."""
    for kind in ("stringValue", "boolValue", "doubleValue"):
        if kind in v:
            return v[kind]
    if "intValue" in v:
        return int(v["intValue"])
    return v


def _attributes(items: Iterable[dict[str, Any]] | None) -> dict[str, Any]:
    return {a["key"]: _value(a.get("value", {})) for a in items or () if "key" in a}


@dataclass(slots=True)
class LiveTrace:
    """The spans of one trace seen so far, as OTLP-JSON fragments.

    Attributes:
        trace_id: hex trace id.
        first_seen: monotonic time its first span was read.
        last_seen: monotonic time its latest span was read.
        root: whether its root span (no parent) has arrived.
        service: ``service.name`` of the root's resource (else the first span's).
        version: ``service.version`` likewise (the app version).
        case_id: ``groundtrace.request.case_id`` of any span.
        attributes: the root span's attributes over its resource's.
        evaluation: whether a span or resource carries an evaluation marker.
        spans: resource JSON -> scope JSON -> the spans.
        logs: resource JSON -> scope JSON -> the log records joined to the trace.
    """

    trace_id: str
    first_seen: float
    last_seen: float
    root: bool = False
    service: str | None = None
    version: str | None = None
    case_id: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    evaluation: bool = False
    spans: dict[bytes, dict[bytes, list[Any]]] = field(default_factory=dict)
    logs: dict[bytes, dict[bytes, list[Any]]] = field(default_factory=dict)
    #: The trace as a τ line (a ``collect phoenix`` / ``traces convert`` file), when it was
    #: read as one: it is written back as it is.
    tau: bytes | None = None

    def export_lines(self) -> list[bytes]:
        """The trace as OTLP-JSON export lines: one of its spans, one of its log records (or
        its τ line)."""
        if self.tau is not None:
            return [self.tau]
        lines = [orjson.dumps({"resourceSpans": _group(self.spans, "scopeSpans", "spans")})]
        if self.logs:
            lines.append(orjson.dumps({"resourceLogs": _group(self.logs, "scopeLogs",
                                                              "logRecords")}))  # fmt: skip
        return lines


def _group(by_resource: dict[bytes, dict[bytes, list[Any]]], scopes: str, items: str) -> list[Any]:
    return [
        {"resource": orjson.loads(resource),
         scopes: [{"scope": orjson.loads(scope), items: found} for scope, found in by.items()]}
        for resource, by in by_resource.items()
    ]  # fmt: skip


#: Suffixes of the OTLP-JSON lines files a folder is read for.
SUFFIXES = (".jsonl", ".json", ".ndjson")


class FolderTail:
    """Reads the whole lines appended to a file, or to a folder's OTLP-JSON lines files (found
    below it, in name order: the receiver's names sort by time and sequence), since the last
    call. A partial last line (the writer is mid-write) is left for the next call.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        #: Bytes read of each file, by (device, inode): a file a Collector's file exporter
        #: renames when it rotates (``traces.jsonl`` -> ``traces-<time>.jsonl``) is the same
        #: file, read on from where it was.
        self._offsets: dict[tuple[int, int], int] = {}

    def _files(self) -> list[Path]:
        if self.folder.is_file():
            return [self.folder]
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())

    def files(self) -> list[Path]:
        """The files read, in order."""
        return self._files()

    def read(self) -> Iterator[tuple[Path, bytes]]:
        """(file, line) of every whole line not read before."""
        for path in self._files():
            yield from self.read_file(path)

    def read_file(self, path: Path) -> Iterator[tuple[Path, bytes]]:
        """(file, line) of the whole lines of one file not read before."""
        try:
            with path.open("rb") as f:
                info = os.fstat(f.fileno())
                key = (info.st_dev, info.st_ino)
                start = self._offsets.get(key, 0)
                if info.st_size <= start:
                    return
                f.seek(start)
                data = f.read(info.st_size - start)
        except OSError:  # rotated away between the listing and now
            return
        end = data.rfind(b"\n") + 1
        self._offsets[key] = start + end
        for line in data[:end].splitlines():
            if line.strip():
                yield path, line


class Assembler:
    """Keeps the traces that ``wanted(trace_id)`` selects until they are complete.

    Args:
        wanted: whether a trace id is sampled by some rule (traces no rule samples are not
            kept at all: memory follows the sample, not the traffic).
        complete_after: seconds of quiet after the root span arrived.
        give_up_after: seconds after the first span with no root: given up (incomplete).
        clock: monotonic seconds (a test's clock).
    """

    def __init__(
        self,
        wanted: Callable[[str], bool],
        *,
        complete_after: float,
        give_up_after: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.wanted = wanted
        self.complete_after = complete_after
        self.give_up_after = give_up_after
        self.clock = clock
        self.pending: dict[str, LiveTrace] = {}
        #: Lines that were not OTLP-JSON exports (named by file, counted).
        self.bad_lines: dict[str, int] = {}
        self.spans_read = 0

    def add_line(self, where: Path | str, line: bytes) -> None:
        """Take in one export line (spans or log records); a bad line is counted, not raised.

        A line whose trace ids no rule samples is not decoded at all (most lines, at a small
        sample: what keeps reading behind the receiver cheap).
        """
        found = TRACE_IDS.findall(line)
        if found and not any(self.wanted(t.decode("ascii").lower()) for t in set(found)):
            return
        try:
            export = orjson.loads(line)
            now = self.clock()
            for resource in export.get("resourceSpans", ()):
                self._add(resource, "scopeSpans", "spans", now, spans=True)
            for resource in export.get("resourceLogs", ()):
                self._add(resource, "scopeLogs", "logRecords", now, spans=False)
        except (orjson.JSONDecodeError, AttributeError, TypeError, KeyError):
            self.bad_lines[str(where)] = self.bad_lines.get(str(where), 0) + 1

    def _add(self, resource: dict[str, Any], scopes: str, items: str, now: float, *,
             spans: bool) -> None:  # fmt: skip
        res = resource.get("resource", {})
        res_key = orjson.dumps(res)
        res_attrs = _attributes(res.get("attributes"))
        for scope in resource.get(scopes, ()):
            scope_key = orjson.dumps(scope.get("scope", {}))
            for item in scope.get(items, ()):
                trace_id = str(item.get("traceId", "")).lower()
                if not trace_id or not self.wanted(trace_id):
                    continue
                trace = self.pending.get(trace_id)
                if trace is None:
                    trace = self.pending[trace_id] = LiveTrace(trace_id, now, now)
                trace.last_seen = now
                store = trace.spans if spans else trace.logs
                store.setdefault(res_key, {}).setdefault(scope_key, []).append(item)
                if spans:
                    self.spans_read += 1
                    self._note_span(trace, item, res_attrs)

    @staticmethod
    def _note_span(trace: LiveTrace, span: dict[str, Any], resource: dict[str, Any]) -> None:
        attrs = _attributes(span.get("attributes"))
        if any(m in attrs or m in resource for m in EVALUATION_MARKERS):
            trace.evaluation = True
        case_id = attrs.get(sc.GT_REQUEST_CASE_ID)
        if case_id is not None and trace.case_id is None:
            trace.case_id = str(case_id)
        is_root = not span.get("parentSpanId")
        if is_root or trace.service is None:
            trace.service = resource.get(sc.SERVICE_NAME, trace.service)
            trace.version = resource.get(sc.SERVICE_VERSION, trace.version)
        if is_root:
            trace.root = True
            trace.attributes = {**resource, **attrs}

    def ripe(self, *, everything: bool = False) -> tuple[list[LiveTrace], list[LiveTrace]]:
        """Take out the complete traces and the given-up ones, in the order they started.

        ``everything``: no more span will come (a backfill read all its files): every trace
        with a root is complete, every other one given up.
        """
        now = self.clock()
        done: list[LiveTrace] = []
        lost: list[LiveTrace] = []
        for trace_id, trace in list(self.pending.items()):
            if trace.root and (everything or now - trace.last_seen >= self.complete_after):
                done.append(self.pending.pop(trace_id))
            elif not trace.root and (everything or now - trace.first_seen >= self.give_up_after):
                lost.append(self.pending.pop(trace_id))
        return done, lost


def tau_trace(line: bytes, now: float) -> LiveTrace:
    """A complete trace from a τ line (what ``collect phoenix --out`` and ``traces convert``
    write: one whole trace a line).

    Raises:
        msgspec.DecodeError, msgspec.ValidationError: not a τ line.
    """
    from groundtrace.collectors.model import loads

    trace = loads(line)
    request = trace.request
    root = next((s for s in trace.steps if s.parent_span_id is None), None)
    attributes = dict(root.attributes) if root is not None else {}
    return LiveTrace(
        trace.trace_id.lower(), now, now, root=root is not None, service=request.service_name,
        version=request.app_version, case_id=request.case_id, attributes=attributes,
        evaluation=trace.replay is not None or any(m in attributes for m in EVALUATION_MARKERS),
        tau=line,
    )  # fmt: skip


def is_tau_file(path: Path) -> bool:
    """Whether the file holds τ lines (its first line is a trace with a ``model_version``)."""
    with path.open("rb") as f:
        first = f.readline()
    try:
        head = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(head, dict) and "model_version" in head and "request" in head


def write_batch(traces: Iterable[LiveTrace], path: Path) -> tuple[Path, ...]:
    """Write the traces to ``path`` as OTLP-JSON lines (a trace file the analyses read), and
    those read as τ lines to a second file beside it; the files written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tau_path = path.with_name(path.stem + "-tau.jsonl")
    written: list[Path] = []
    with path.open("wb") as otlp, tau_path.open("wb") as tau:
        for trace in traces:
            for line in trace.export_lines():
                (tau if trace.tau is not None else otlp).write(line + b"\n")
    for file in (path, tau_path):
        if file.stat().st_size:
            written.append(file)
        else:
            file.unlink()
    return tuple(written)
