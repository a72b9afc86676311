"""``groundtrace paths``: command-path validation of traces against a case file (SPEC 4.3).

A front-end over the ``paths`` analysis (``groundtrace.analyzer.paths``): its options make the
analysis's :class:`Config`, which the one driver runs (:func:`drive`: lock, budget,
``--estimate``, reports, write-back, exit code), as ``groundtrace analyze paths --config``
does; the printing is its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from groundtrace.analyzer.paths import Config

from ._analyze import drive
from ._app import console, handle_errors
from ._budget import CallOptions
from ._executor import ExecutorOptions
from ._fields import record_options
from ._options import fields_as_options, uses
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun
    from groundtrace.analyzer.paths import PathsResult

__all__ = ["register"]

#: The options of ``paths.Config``'s fields: TRACES the argument (``--format`` the trace format,
#: as the record names it).
PATHS_OPTIONS = record_options(Config, argument="traces", declared={"strict": (StrictOpt, bool)})


@handle_errors
@uses(WriteBackOptions, ExecutorOptions, CallOptions, PATHS_OPTIONS)
def paths_command(
    *,
    out: Annotated[Path, typer.Option(help="Report folder (report.json, summary.md, .html).")],
    config: Config,
    fail_on_failure: Annotated[
        bool, typer.Option("--fail-on-failure", help="Exit 1 when any case fails the path check.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (cases, metrics).")
    ] = False,
    write_back: WriteBackOptions,
    executor: ExecutorOptions,
    calls: CallOptions,
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
    from groundtrace.analyzer.paths import ANALYSIS

    def show(result: PathsResult, done: AnalysisRun[PathsResult]) -> None:
        check_unreadable([line.error() for line in result.read_errors], False)
        if as_json:
            payload = to_builtins(result.report)
            typer.echo(json.dumps({"cases": payload["cases"], "metrics": payload["metrics"]}))
        else:  # the summary holds the reading (paths.reading)
            console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False)
            console.print(f"report: {done.reports[0]}", markup=False)

    done = drive(  # streamed: each trace is validated as it is read
        ANALYSIS, config, out, calls=calls, in_flight=1, as_json=as_json, show=show,
        executor=executor, write_back=write_back,
        naming=fields_as_options(PATHS_OPTIONS.option_names),
    )  # fmt: skip
    if done is not None and fail_on_failure:
        assert done.result is not None
        if any(v.path_pass is False for v in done.result.report.verdicts):
            raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace paths`` to ``app``."""
    app.command("paths")(paths_command)
