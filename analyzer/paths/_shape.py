"""The ``paths`` analysis in the one analysis shape: ``plan`` → ``run`` → report and reading.

The units are the cases (``plan`` reads the case file and the tools config, never a trace).
``run`` streams the traces: each one is validated as it is read and let go (see
:func:`~groundtrace.analyzer.paths.validate_traces_async`), so no run holds every trace.
Under ``strict`` it refuses the run when a trace line cannot be read, after the one pass over
the traces and before the driver writes any report (the lines are counted and the first named:
a refusal in ``plan`` would read every trace twice).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from groundtrace.analyzer._analysis import Analysis
from groundtrace.analyzer._unreadable import refuse_unreadable, skipped_lines
from groundtrace.analyzer.cases import Case, read_cases
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.collectors.model import Trace
from groundtrace.collectors.transcripts import read_transcripts

from ._config import CASES_FORMATS, TRACE_FORMATS, Config
from ._demo import demo_config
from ._outcome import PathsResult, UnreadableLine
from ._reading import reading
from ._report import write_report
from ._run import PathReport, validate_traces_async
from ._tau import tau_bench_cases
from ._tools_config import ToolsConfig, load_tools_config

if TYPE_CHECKING:
    from groundtrace.analyzer import RunContext
    from groundtrace.analyzer.writeback import Linked

__all__ = ["ANALYSIS", "nothing_measured", "plan", "run", "verdicts"]


def _check(config: Config) -> None:
    """The checks ``load_config`` makes on a file, for a config built in code."""
    if not config.traces:
        raise ConfigError("names no trace file or folder", field="traces")
    if config.trace_format not in TRACE_FORMATS:
        raise ConfigError(f"must be one of {', '.join(TRACE_FORMATS)}", field="trace_format")
    if config.cases_format not in CASES_FORMATS:
        raise ConfigError(f"must be one of {', '.join(CASES_FORMATS)}", field="cases_format")
    if not 0.0 < config.quote_threshold <= 1.0:
        raise ConfigError("must lie in (0, 1]", field="quote_threshold")
    if config.resamples < 1:
        raise ConfigError("must be >= 1", field="resamples")


def _tools(config: Config) -> ToolsConfig | None:
    return None if config.tools_config is None else load_tools_config(config.tools_config)


def plan(config: Config) -> tuple[Case, ...]:
    """The cases the run validates, read from ``config.cases`` (the traces are read by
    :func:`run`, streamed); the tools config is read too, so a bad one fails here.

    Raises:
        ConfigError: a field out of range (named), or a bad tools config (file named).
        InputError: an unreadable case file or a malformed row (file, line and field named).
    """
    _check(config)
    if config.cases_format == "tau-bench":
        cases = tuple(tau_bench_cases(config.cases))
    else:
        cases = tuple(read_cases(config.cases))
    _tools(config)
    return cases


def _traces(config: Config, read: ReadReport) -> Iterator[Trace]:
    if config.trace_format == "transcript":
        return read_transcripts(list(config.traces), report=read)
    return read_traces(list(config.traces), report=read)


async def run(units: Sequence[Case], config: Config, context: RunContext) -> PathsResult:
    """Validate the traces of ``config`` against the cases ``units`` (from :func:`plan`).

    The traces are read once, lazily, and each (case, trace) pair is a unit of the run's
    executor (:func:`~groundtrace.analyzer.paths.validate_traces_async`). A trace line that
    cannot be read is skipped: it is in :attr:`PathsResult.read_errors` and named in a note of
    the report (``config.strict`` refuses the run instead, before any report is written).
    The root span of every trace joined to a case is kept for :func:`verdicts`. Run by
    :func:`~groundtrace.analyzer.run_analysis` (or awaited from
    :func:`~groundtrace.analyzer.run_analysis_async`).

    Raises:
        ConfigError: a bad tools config (file named).
        TraceReadError: a trace file or folder that cannot be opened, or ``config.strict``
            and a line that cannot be read (the first one named).
    """
    from groundtrace.analyzer.writeback import root_spans

    roots: dict[str, str] = {}

    def note_root(trace: Trace) -> None:
        for trace_id, span_id in root_spans((trace,)).items():
            roots.setdefault(trace_id, span_id)  # a split trace keeps its first root

    read = ReadReport()
    report = await validate_traces_async(
        _traces(config, read),
        units,
        _tools(config),
        settings=StatsSettings(n_resamples=config.resamples, seed=config.seed),
        quote_threshold=config.quote_threshold,
        executor=context.executor,
        on_match=note_root,
    )
    if config.strict:
        refuse_unreadable(read.errors)
    errors = tuple(UnreadableLine.of(error) for error in read.errors)
    if errors:
        report = msgspec.structs.replace(report, notes=(*report.notes, skipped_lines(errors)))
    with_verdict = {v.trace_id for v in report.verdicts}
    for trace_id in [t for t in roots if t not in with_verdict]:  # the other turns of a run
        del roots[trace_id]
    return PathsResult(report=report, read_errors=errors, roots=roots)


def _report(result: PathsResult | PathReport) -> PathReport:
    return result if isinstance(result, PathReport) else result.report


def nothing_measured(result: PathsResult | PathReport) -> str | None:
    """Why no case run was checked (no trace of any case, every run not applicable or not
    required), or ``None`` when one was."""
    return _report(result).nothing_measured


def verdicts(result: PathsResult, config: Config) -> Linked:
    """The path status of every case run, on its trace's root span (for ``--write-back``);
    a case without a trace (or a root span) is listed as not linked."""
    from ._verdicts import path_verdicts

    return path_verdicts(result.report, result.roots)


#: The ``paths`` analysis (``groundtrace.analyzer.get_analysis("paths")``).
ANALYSIS: Final[Analysis[Config, Case, PathsResult]] = Analysis(
    name="paths",
    title="Command-path validation: did the answers come from what was read?",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    verdicts=verdicts,
    demo=demo_config,
)
