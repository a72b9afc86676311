"""Keeping only the counterfactual traces of journaled units, so a resumed run has one per unit.

A unit's spans are written to ``counterfactual_traces/`` by whichever process runs it, as each
span ends; its result is journaled by the driver when it arrives. A run killed in between (a
unit in flight, or finished and not journaled yet) leaves spans of units that a resumed run
replays again, under a new trace id. :func:`keep_traces` runs when a run opens its folder
(holding its lock, so nobody writes there): it removes from every OTLP-JSON lines file the
spans of traces that no journaled unit names, and the torn last line a kill mid-write leaves.
Each file is rewritten to a hidden temporary file and renamed over the original, so a kill
during the pruning leaves either file whole (and the next pruning removes the temporary one).
Lines it cannot read (other than a torn last one) are left as they are, for the trace reader
to report. The workers of a killed run can outlive its driver (a Ray worker finishing the
unit it held) and write after the pruning: a run drops, once every unit has its result, the
traces no result names (:func:`keep_traces` again).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import orjson

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.executor import UnitJournal

from ._types import UnitResult

__all__ = ["journaled_trace_ids", "keep_traces"]


def journaled_trace_ids(journal: UnitJournal) -> set[str]:
    """The counterfactual trace ids of the completed replay units of ``journal`` (the traces
    a resumed run keeps).

    Raises:
        InputError: a completed replay record does not decode.
    """
    return {
        r.counterfactual_trace_id
        for r in journal.completed(UnitResult)
        if r.counterfactual_trace_id
    }


def _filtered(record: Any, keep: Collection[str], dropped: set[str]) -> Any | None:
    """``record`` (an ExportTraceServiceRequest) with only the spans of ``keep``; ``None``
    when none is left. Unchanged records are returned as they are."""
    if not isinstance(record, dict):
        return record
    resources = record.get("resourceSpans")
    if not isinstance(resources, list):
        return record
    changed = False
    kept_resources = []
    for resource in resources:
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            kept_resources.append(resource)
            continue
        kept_scopes = []
        for scope in scopes:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                kept_scopes.append(scope)
                continue
            mine = []
            for span in spans:
                trace_id = str(span.get("traceId", "")).lower() if isinstance(span, dict) else ""
                if trace_id and trace_id not in keep:
                    dropped.add(trace_id)
                else:
                    mine.append(span)
            changed |= len(mine) != len(spans)
            if mine:
                kept_scopes.append({**scope, "spans": mine})
        if kept_scopes:
            kept_resources.append({**resource, "scopeSpans": kept_scopes})
    if not changed:
        return record
    return {**record, "resourceSpans": kept_resources} if kept_resources else None


def _prune_file(path: Path, keep: Collection[str], dropped: set[str]) -> None:
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends with a newline, else a line cut by a kill
    out: list[bytes] = []
    changed = bool(torn)
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)  # not ours to judge: the reader reports it with its line
            continue
        kept = _filtered(record, keep, dropped)
        if kept is record:
            out.append(line)
        else:
            changed = True
            if kept is not None:
                out.append(orjson.dumps(kept))
    if not changed:
        return
    temporary = path.with_name(f".{path.name}.prune")
    with temporary.open("wb") as handle:
        handle.write(b"".join(line + b"\n" for line in out))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def keep_traces(folder: str | Path, keep: Collection[str]) -> int:
    """Remove from the OTLP-JSON lines files in ``folder`` every span whose trace id is not in
    ``keep`` (lower-case hex); returns how many traces were removed.

    Raises:
        ConfigError: a file cannot be read or rewritten.
    """
    where = Path(folder)
    dropped: set[str] = set()
    if not where.is_dir():
        return 0
    try:
        for left in where.glob(".*.jsonl.prune"):  # of a pruning that was killed
            left.unlink()
    except OSError as exc:
        raise ConfigError(
            f"cannot prune the counterfactual traces: {exc}", path=str(where)
        ) from exc
    for path in sorted(where.glob("*.jsonl")):
        try:
            _prune_file(path, keep, dropped)
        except OSError as exc:
            raise ConfigError(
                f"cannot prune the counterfactual traces: {exc}", path=str(path)
            ) from exc
    return len(dropped)
