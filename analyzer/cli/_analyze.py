"""``groundtrace analyze NAME --config FILE --out DIR``: any analysis, through the one driver.

The one command every analysis has, built-in or added by a plugin
(:mod:`groundtrace.analyzer._analysis`): the config record is read from the TOML or JSON file
and handed to :func:`~groundtrace.analyzer.run_analysis`, which plans, runs (journal, budget,
progress), writes the reports, writes the verdicts back and decides the exit code. The
analysis-specific commands (``interventions``, ``judge``...) are friendlier front-ends: their
options make the same config record, run by the same :func:`drive`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._app import console, err_console, handle_errors, print_reading
from ._budget import CallOptions, CallSettings
from ._executor import ExecutorOptions
from ._options import uses
from ._progress import ProgressReporter
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import Analysis, AnalysisRun

__all__ = ["drive", "finish", "register"]


def drive(
    analysis: Analysis[Any, Any, Any],
    config: Any,
    out: Path,
    *,
    executor: ExecutorOptions,
    settings: CallSettings,
    estimate: bool,
    in_flight: int | None,
    write_back: WriteBackOptions | None,
    as_json: bool,
    units: Any = None,
) -> AnalysisRun[Any] | None:
    """Run ``analysis`` on ``config`` into ``out`` through the driver, as every command does:
    ``in_flight`` units at a time on the executor the options ask for (``None``: every unit
    at once in this process), under the call settings' budget (:meth:`CallOptions.settings`).

    With ``estimate`` the estimate is printed and ``None`` returned (nothing ran); else the
    run's envelope (the caller prints it, then :func:`finish`).
    """
    from groundtrace.analyzer import run_analysis

    send = write_back.send if write_back is not None and write_back.requested else None
    if estimate:
        done = run_analysis(
            analysis, config, out=out, prices=settings.prices, estimate=True, units=units
        )
        assert done.estimate is not None
        from groundtrace.analyzer._results import encode

        found = done.estimate
        typer.echo(encode(found).decode() if as_json else found.text(), nl=as_json)
        return None
    with ProgressReporter(err_console) as progress:
        if in_flight is None:
            return run_analysis(
                analysis, config, out=out, concurrency=None, budget=settings.budget,
                progress=progress, write_back=send, units=units,
            )  # fmt: skip
        with executor.open(in_flight) as runner:
            return run_analysis(
                analysis, config, out=out, executor=runner, budget=settings.budget,
                progress=progress, write_back=send, units=units,
            )  # fmt: skip


def finish(done: AnalysisRun[Any]) -> None:
    """Exit as the run's one exit code says (6 names why nothing was measured)."""
    if done.exit_code == 6 and done.reason is not None:
        from groundtrace.analyzer.errors import NothingMeasuredError

        where = done.reports[0] if done.reports else "none written"
        raise NothingMeasuredError(f"nothing measured: {done.reason} (report: {where})")
    if done.exit_code:
        raise typer.Exit(done.exit_code)


def _print(done: AnalysisRun[Any], as_json: bool, to_builtins: Callable[[Any], Any]) -> None:
    if as_json:
        typer.echo(json.dumps(to_builtins(done.result)))
        return
    print_reading(done.reading)
    for report in done.reports:
        console.print(f"report: {report}", markup=False, highlight=False)


@handle_errors
@uses(WriteBackOptions, ExecutorOptions, CallOptions)
def analyze_command(
    name: Annotated[
        str | None, typer.Argument(help="The analysis (see --list), e.g. paths.")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="The analysis's config record, TOML or JSON (docs/analyses.md)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder: reports, journal, cache.")] = None,
    concurrency: Annotated[int, typer.Option(help="Units in flight (per Ray worker).")] = 4,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result record as one JSON object.")
    ] = False,
    list_them: Annotated[
        bool, typer.Option("--list", help="List the analyses this installation can run.")
    ] = False,
    *,
    write_back: WriteBackOptions,
    executor: ExecutorOptions,
    calls: CallOptions,
) -> None:
    """Run any analysis (built-in or a plugin's) from its config file; write its report.

    Plugins name their analysis in the groundtrace.analyses entry-point group. A re-run into
    the same --out resumes (the units its journal holds are not run again); --max-calls /
    --max-cost stop the run at a ceiling (exit 5); --estimate prints what the units still to
    run would call and runs nothing. Exit codes: 0 done, 2 bad input (the message names the
    file and field), 4 when --write-back failed (the report is written), the code the
    analysis's verdict asks for (gate: 10 manual review, 20 block, 30 not evaluable), else 6
    when nothing was measured (the report is written, the reason printed).
    """
    from groundtrace.analyzer import analyses, get_analysis, load_config
    from groundtrace.analyzer._results import to_builtins
    from groundtrace.analyzer.errors import ConfigError

    if list_them:
        for known in analyses():
            try:
                title = get_analysis(known).title
            except ConfigError as exc:  # a broken plugin is named, not hidden
                title = f"(cannot be loaded: {exc})"
            typer.echo(f"{known:16} {title}")
        return
    if name is None or config is None or out is None:
        missing = [
            o for o, v in (("NAME", name), ("--config", config), ("--out", out)) if v is None
        ]
        raise ConfigError(f"analyze needs {', '.join(missing)} (or --list)")
    analysis = get_analysis(name)
    if write_back.requested and analysis.verdicts is None:
        raise ConfigError(f"{analysis.name} has no per-case results to write back",
                          field="--write-back")  # fmt: skip
    record = load_config(analysis, config)
    done = drive(
        analysis, record, out, executor=executor, settings=calls.settings(concurrency),
        estimate=calls.estimate, in_flight=concurrency, write_back=write_back, as_json=as_json,
    )  # fmt: skip
    if done is None:
        return
    err_console.print(f"{analysis.name}: {done.units} unit(s) planned", highlight=False)
    _print(done, as_json, to_builtins)
    finish(done)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace analyze`` to ``app``."""
    app.command("analyze")(analyze_command)
