"""``groundtrace paths``: command-path validation of traces against a case file (SPEC 4.3).

A front-end over the ``paths`` analysis (``groundtrace.analyzer.paths``): its options make the
analysis's :class:`Config`, which the one driver runs (:func:`drive`: lock, budget,
``--estimate``, reports, write-back, exit code), as ``groundtrace analyze paths --config``
does; the printing is its own.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Final

import typer

from ._analyze import drive, finish
from ._app import console, handle_errors
from ._budget import CallOptions
from ._executor import ExecutorOptions
from ._options import fields_as_options, uses
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

__all__ = ["register"]

#: Minimum fuzzy ratio of a quote: ``analyzer.paths._quotes.DEFAULT_QUOTE_THRESHOLD``, spelled
#: out so that --help imports no analysis (a test keeps the two equal).
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
@uses(WriteBackOptions, ExecutorOptions, CallOptions)
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
    calls: CallOptions,
    strict: StrictOpt = False,
) -> None:
    """Did the answers really come from what was read? Text and path channels side by side.

    Exit codes: 0 done (1 with --fail-on-failure when a case fails), 2 on bad input, 4 when
    --write-back failed (the report is written), 6 when nothing was measured: no trace of
    any case, or no case run to check (every one "not applicable: no tool calls" -- an app
    whose answers come from no traced tool -- or require_path false); the report is written
    (and nothing is written back). Unreadable trace lines are skipped, named and noted in the
    report (--strict refuses them before any report is written, exit 2). The run is the one
    `groundtrace analyze paths --config` runs: the same reports and exit codes. It makes no
    model call: --max-calls / --max-cost are accepted as everywhere (never reached), and
    --estimate is refused (there is nothing to estimate).
    """
    from groundtrace.analyzer._results import to_builtins
    from groundtrace.analyzer.paths import ANALYSIS, Config

    config = Config(
        traces=tuple(traces),
        cases=str(cases),
        tools_config=None if tools_config is None else str(tools_config),
        trace_format=trace_format.value,
        cases_format=cases_format.value,
        quote_threshold=quote_threshold,
        resamples=resamples,
        seed=seed,
        strict=strict,
    )
    with fields_as_options(_OPTIONS):  # streamed: each trace is validated as it is read
        done = drive(
            ANALYSIS, config, out, executor=executor, settings=calls.settings(None),
            estimate=calls.estimate, in_flight=1, write_back=write_back, as_json=as_json,
        )  # fmt: skip
    if done is None:
        return
    result = done.result
    assert result is not None  # not an estimate
    check_unreadable([line.error() for line in result.read_errors], False)
    if as_json:
        payload = to_builtins(result.report)
        typer.echo(json.dumps({"cases": payload["cases"], "metrics": payload["metrics"]}))
    else:  # the summary holds the reading (paths.reading)
        console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False)
        console.print(f"report: {done.reports[0]}", markup=False)
    finish(done)
    if fail_on_failure and any(v.path_pass is False for v in result.report.verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace paths`` to ``app``."""
    app.command("paths")(paths_command)
