"""``groundtrace paths``: command-path validation of traces against a case file (SPEC 4.3)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from . import _writeback as wb
from ._app import console, handle_errors
from ._executor import ExecutorName, ExecutorOpt, RayAddressOpt, RayWorkersOpt, open_executor
from ._reading import StrictOpt, check_unreadable
from ._runfolder import holds_out_folder

if TYPE_CHECKING:
    from groundtrace.analyzer.cases import Case
    from groundtrace.collectors import ReadReport, Trace

__all__ = ["register"]

#: Minimum fuzzy ratio of a quote: ``analyzer.paths.DEFAULT_QUOTE_THRESHOLD``, spelled out so
#: that --help imports no analysis (a test keeps the two equal).
QUOTE_THRESHOLD: Final = 0.9


class TraceFormat(StrEnum):
    """What the trace inputs hold."""

    OTLP = "otlp"
    TRANSCRIPT = "transcript"


class CasesFormat(StrEnum):
    """What the case file holds."""

    GROUNDTRACE = "groundtrace"
    TAU_BENCH = "tau-bench"


def _traces(paths: list[str], fmt: TraceFormat, report: ReadReport) -> Iterator[Trace]:
    from groundtrace.collectors import read_traces
    from groundtrace.collectors.transcripts import read_transcripts

    if fmt is TraceFormat.TRANSCRIPT:
        return read_transcripts(paths, report=report)
    return read_traces(paths, report=report)


def _cases(path: Path, fmt: CasesFormat) -> list[Case]:
    from groundtrace.analyzer.cases import read_cases
    from groundtrace.analyzer.paths import tau_bench_cases

    if fmt is CasesFormat.TAU_BENCH:
        return list(tau_bench_cases(path))
    return list(read_cases(path))


@handle_errors
@holds_out_folder
def paths_command(
    traces: Annotated[list[str], typer.Argument(help="Trace files or directories.")],
    cases: Annotated[Path, typer.Option(help="Case file (JSONL, see analyzer.paths).")],
    out: Annotated[Path, typer.Option(help="Report folder (report.json, summary.md, .html).")],
    tools_config: Annotated[
        Path | None,
        typer.Option("--tools-config", help="TOML/JSON: which tool arguments are paths read."),
    ] = None,
    trace_format: Annotated[
        TraceFormat,
        typer.Option("--format", help="otlp: OTLP trace files; transcript: chat transcripts."),
    ] = TraceFormat.OTLP,
    cases_format: Annotated[
        CasesFormat,
        typer.Option(
            "--cases-format",
            help="groundtrace: path-case JSONL; tau-bench: results rows with info.task.actions.",
        ),
    ] = CasesFormat.GROUNDTRACE,
    quote_threshold: Annotated[
        float, typer.Option(help="Minimum fuzzy ratio for a quote to occur in what was read.")
    ] = QUOTE_THRESHOLD,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 5000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed (recorded in the report).")] = 42,
    fail_on_failure: Annotated[
        bool, typer.Option("--fail-on-failure", help="Exit 1 when any case fails the path check.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (cases, metrics).")
    ] = False,
    write_back_to: wb.WriteBackOpt = None,
    otlp_endpoint: wb.OtlpEndpointOpt = wb.DEFAULT_OTLP_ENDPOINT,
    phoenix_url: wb.PhoenixUrlOpt = wb.DEFAULT_PHOENIX_URL,
    executor: ExecutorOpt = ExecutorName.LOCAL,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = 2,
    strict: StrictOpt = False,
) -> None:
    """Did the answers really come from what was read? Text and path channels side by side.

    Exit codes: 0 done (1 with --fail-on-failure when a case fails), 2 on bad input, 4 when
    --write-back failed (the report is written), 6 when nothing was measured: no trace of
    any case, or no case run to check (every one "not applicable: no tool calls" -- an app
    whose answers come from no traced tool -- or require_path false); the report is written.
    Unreadable trace lines are skipped, named and noted in the report (--strict refuses
    them, exit 2).
    """
    from groundtrace.analyzer._results import to_builtins
    from groundtrace.analyzer.errors import InputError
    from groundtrace.analyzer.paths import load_tools_config, validate_traces, write_report
    from groundtrace.analyzer.stats import StatsSettings
    from groundtrace.collectors import ReadReport

    if not 0.0 < quote_threshold <= 1.0:
        raise InputError("must lie in (0, 1]", field="--quote-threshold")
    case_list = _cases(cases, cases_format)
    tools = load_tools_config(tools_config) if tools_config is not None else None
    read = ReadReport()
    roots: dict[str, str] = {}  # trace id -> root span id, kept only for --write-back
    # streamed: each trace is validated as it is read, none is held
    with open_executor(executor, ray_address, ray_workers, 1) as runner:
        report = validate_traces(
            _noting_roots(_traces(traces, trace_format, read), roots if write_back_to else None),
            case_list,
            tools,
            settings=StatsSettings(n_resamples=resamples, seed=seed),
            quote_threshold=quote_threshold,
            executor=runner,
        )
    check_unreadable(read.errors, strict)  # --strict refuses before the report is written
    if read.errors:
        import msgspec

        from ._reading import unreadable_message

        report = msgspec.structs.replace(
            report, notes=(*report.notes, unreadable_message(read.errors))
        )
    path = write_report(report, out)
    if write_back_to is not None:
        from groundtrace.analyzer.writeback import path_verdicts

        linked = path_verdicts(report, roots)
        wb.write_back(write_back_to, linked, otlp_endpoint=otlp_endpoint, phoenix_url=phoenix_url)
    if as_json:
        payload = to_builtins(report)
        typer.echo(json.dumps({"cases": payload["cases"], "metrics": payload["metrics"]}))
    else:
        console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False)
        console.print(f"report: {path}", markup=False)
    if report.nothing_measured is not None:
        from groundtrace.analyzer.errors import NothingMeasuredError

        raise NothingMeasuredError(f"nothing measured: {report.nothing_measured} (report: {path})")
    if fail_on_failure and any(v.path_pass is False for v in report.verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace paths`` to ``app``."""
    app.command("paths")(paths_command)


def _noting_roots(traces: Iterable[Trace], roots: dict[str, str] | None) -> Iterator[Trace]:
    """Pass ``traces`` through, noting each one's root span id in ``roots`` (when given)."""
    if roots is None:
        yield from traces
        return
    from groundtrace.analyzer.writeback import root_spans

    for trace in traces:
        for trace_id, span_id in root_spans((trace,)).items():
            roots.setdefault(trace_id, span_id)  # a split trace keeps its first root
        yield trace
