"""The configuration record of the ``paths`` analysis (``groundtrace analyze paths``)."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from ._quotes import DEFAULT_QUOTE_THRESHOLD

__all__ = ["CASES_FORMATS", "TRACE_FORMATS", "CasesFormat", "Config", "TraceFormat"]

#: What the trace inputs hold: OTLP trace files, or chat transcripts (tau-bench style).
TraceFormat = Literal["otlp", "transcript"]
#: What the case file holds: path-case JSON lines, or tau-bench results rows.
CasesFormat = Literal["groundtrace", "tau-bench"]

TRACE_FORMATS: Final[tuple[str, ...]] = ("otlp", "transcript")
CASES_FORMATS: Final[tuple[str, ...]] = ("groundtrace", "tau-bench")


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What ``groundtrace paths`` validates, and how (every option but where the report goes).

    Read from a TOML or JSON file by :func:`groundtrace.analyzer.load_config` (the ranges
    below are checked there, naming the file and field) or built in code (then
    :func:`~groundtrace.analyzer.paths.plan` checks them, naming the field)::

        traces = ["runs/agent/traces"]
        cases = "runs/agent/cases.jsonl"
        tools_config = "runs/agent/tools.toml"

    Attributes:
        traces: the trace files or folders, read in this order (at least one).
        cases: the case file (JSON lines, ``docs/cases.md``; a tau-bench results file with
            ``cases_format = "tau-bench"``).
        tools_config: a TOML/JSON file naming which tool arguments are paths read
            (:func:`~groundtrace.analyzer.paths.load_tools_config`); ``None``: none.
        trace_format: ``"otlp"`` (OTLP trace files) or ``"transcript"`` (chat transcripts).
        cases_format: ``"groundtrace"`` (path cases) or ``"tau-bench"`` (results rows with
            ``info.task.actions``: only the write calls are required).
        quote_threshold: the minimum fuzzy ratio for a quote to occur in what was read, in
            (0, 1] (default 0.9).
        resamples: bootstrap resamples of the metrics' intervals (>= 1).
        seed: the bootstrap seed (recorded in the report).
        strict: refuse the run when a trace line cannot be read (``TraceReadError``, before
            any report is written); else the line is skipped and named
            (:attr:`~groundtrace.analyzer.paths.PathsResult.read_errors` and a note of the
            report). ``groundtrace paths --strict`` sets it.
    """

    traces: Annotated[tuple[str, ...], msgspec.Meta(min_length=1)]
    cases: str
    tools_config: str | None = None
    trace_format: Annotated[TraceFormat, msgspec.Meta(extra={"option": "--format"})] = "otlp"
    cases_format: CasesFormat = "groundtrace"
    quote_threshold: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = DEFAULT_QUOTE_THRESHOLD
    resamples: Annotated[int, msgspec.Meta(ge=1)] = 5000
    seed: int = 42
    strict: bool = False
