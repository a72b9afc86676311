"""``groundtrace paths``: command-path validation of traces against a case file (SPEC 4.3)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Final

import typer

from ._app import console, handle_errors
from ._executor import ExecutorOptions
from ._options import fields_as_options, uses
from ._runfolder import holds_out_folder
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

__all__ = ["register"]

#: Minimum fuzzy ratio of a quote: ``analyzer.paths.DEFAULT_QUOTE_THRESHOLD``, spelled out so
#: that --help imports no analysis (a test keeps the two equal).
QUOTE_THRESHOLD: Final = 0.9

#: The option each field of ``analyzer.paths.Config`` that ``plan`` checks comes from.
_OPTIONS: Final = {"quote_threshold": "--quote-threshold", "resamples": "--resamples"}


class TraceFormat(StrEnum):
    """What the trace inputs hold."""

    OTLP = "otlp"
    TRANSCRIPT = "transcript"


class CasesFormat(StrEnum):
    """What the case file holds."""

    GROUNDTRACE = "groundtrace"
    TAU_BENCH = "tau-bench"


@handle_errors
@holds_out_folder
@uses(WriteBackOptions, ExecutorOptions)
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
    *,
    write_back: WriteBackOptions,
    executor: ExecutorOptions,
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
    from groundtrace.analyzer.paths import (
        Config,
        nothing_measured,
        plan,
        run,
        verdicts,
        write_report,
    )

    config = Config(
        traces=tuple(traces),
        cases=str(cases),
        tools_config=None if tools_config is None else str(tools_config),
        trace_format=trace_format.value,
        cases_format=cases_format.value,
        quote_threshold=quote_threshold,
        resamples=resamples,
        seed=seed,
    )
    with fields_as_options(_OPTIONS):
        units = plan(config)
    # streamed: each trace is validated as it is read, none is held
    with executor.open(1) as runner:
        result = run(units, config, runner)
    # --strict refuses before the report is written, by the CLI's one rule for every command
    # that reads traces (the config leaves strict off)
    check_unreadable([line.error() for line in result.read_errors], strict)
    path = write_report(result, out)
    write_back.send(lambda: verdicts(result, config))
    if as_json:
        payload = to_builtins(result.report)
        typer.echo(json.dumps({"cases": payload["cases"], "metrics": payload["metrics"]}))
    else:  # the summary holds the reading (paths.reading)
        console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False)
        console.print(f"report: {path}", markup=False)
    reason = nothing_measured(result)
    if reason is not None:
        from groundtrace.analyzer.errors import NothingMeasuredError

        raise NothingMeasuredError(f"nothing measured: {reason} (report: {path})")
    if fail_on_failure and any(v.path_pass is False for v in result.report.verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace paths`` to ``app``."""
    app.command("paths")(paths_command)
