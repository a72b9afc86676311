"""``groundtrace analyze NAME --config FILE --out DIR``: any analysis, through the one driver.

The one command every analysis has, built-in or added by a plugin
(:mod:`groundtrace.analyzer._analysis`): the config record is read from the TOML or JSON file
and handed to :func:`~groundtrace.analyzer.run_analysis`, which plans, runs (journal, budget,
progress), writes the reports, writes the verdicts back and decides the exit code. The
analysis-specific commands (``interventions``, ``judge``...) are friendlier front-ends: their
options make the same config record, run by the same :func:`drive`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.markup import escape
from typer.core import TyperCommand

from ._app import console, err_console, handle_errors, print_reading
from ._budget import CallOptions, with_concurrency
from ._executor import ExecutorOptions
from ._fields import override_options
from ._options import fields_as_options, uses
from ._progress import ProgressReporter
from ._registry import ListingGroup
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import Analysis, AnalysisRun

__all__ = ["drive", "finish", "register"]


def drive(
    analysis: Analysis[Any, Any, Any],
    config: Any,
    out: Path,
    *,
    calls: CallOptions,
    in_flight: int | None,
    as_json: bool,
    show: Callable[[Any, AnalysisRun[Any]], None] | None = None,
    executor: ExecutorOptions | None = None,
    write_back: WriteBackOptions | None = None,
    naming: AbstractContextManager[None] | None = None,
    units: Any = None,
) -> AnalysisRun[Any] | None:
    """Run ``analysis`` on ``config`` into ``out`` through the driver, as every command does:
    ``in_flight`` units at a time on the executor the options ask for (``None``: every unit
    at once in this process), under the call options' settings over the record's
    (:meth:`CallOptions.settings`; ``--estimate``: the estimate printed, nothing run, None
    returned). A bad config field is named as ``naming`` says
    (:func:`~._options.fields_as_options`).

    The run is then shown, ``show(result, run)`` (default: the result record as JSON with
    ``as_json``, else the reading and the reports written), and the command exits as its
    exit code says (:func:`finish`); the run is returned.
    """
    from groundtrace.analyzer import run_analysis

    settings = calls.settings(config)
    send = write_back.send if write_back is not None and write_back.requested else None
    with naming or nullcontext():
        if calls.estimate:
            found = run_analysis(
                analysis, config, out=out, prices=settings.prices, estimate=True, units=units
            ).estimate
            assert found is not None
            from groundtrace.analyzer._results import encode

            typer.echo(encode(found).decode() if as_json else found.text(), nl=as_json)
            return None
        with ProgressReporter(err_console) as progress:
            if in_flight is None:
                done = run_analysis(
                    analysis, config, out=out, concurrency=None, budget=settings.budget,
                    progress=progress, write_back=send, units=units,
                )  # fmt: skip
            else:
                with (executor or ExecutorOptions()).open(in_flight) as runner:
                    done = run_analysis(
                        analysis, config, out=out, executor=runner, budget=settings.budget,
                        progress=progress, write_back=send, units=units,
                    )  # fmt: skip
    assert done.result is not None  # not an estimate
    (show or _printer(as_json))(done.result, done)
    finish(done)
    return done


def finish(done: AnalysisRun[Any]) -> None:
    """Exit as the run's one exit code says (6 names why nothing was measured)."""
    if done.exit_code == 6 and done.reason is not None:
        from groundtrace.analyzer.errors import NothingMeasuredError

        where = done.reports[0] if done.reports else "none written"
        raise NothingMeasuredError(f"nothing measured: {done.reason} (report: {where})")
    if done.exit_code:
        raise typer.Exit(done.exit_code)


def _printer(as_json: bool) -> Callable[[Any, AnalysisRun[Any]], None]:
    """The default showing of a run: its result record as one JSON object (``as_json``), else
    its reading and the reports written."""

    def show(result: Any, done: AnalysisRun[Any]) -> None:
        from groundtrace.analyzer._results import to_builtins

        if as_json:
            typer.echo(json.dumps(to_builtins(result)))
            return
        print_reading(done.reading)
        for report in done.reports:
            console.print(f"report: {report}", markup=False, highlight=False)

    return show


#: The options of ``analyze NAME`` itself: a config field of these names is set in the file.
_RESERVED: Final = frozenset(
    {"name", "config", "out", "concurrency", "as_json", "list_them"}
    | {f.name for group in (WriteBackOptions, ExecutorOptions, CallOptions)
       for f in dataclasses.fields(group)}
)  # fmt: skip

#: ``--concurrency``: as in the analysis's own command.
_CONCURRENCY: Final = (
    "Work in flight: the units run at a time (per Ray worker) and, for an analysis whose "
    "record has a concurrency field (judge, interventions, audit), that field: its model "
    "calls in flight, as the analysis's own --concurrency (default: the config's, else the "
    "call profile's, else the analysis's). Other analyses: default 4."
)

#: ``groundtrace analyze NAME --help``: what every analysis's command does.
_HELP: Final = """{title}

Runs the {name} analysis from its config record: the --config file (TOML or JSON,
docs/analyses.md), each option below overriding its field (an option per field; a field of
another type is set in the file). A re-run into the same --out resumes (the units its journal
holds are not run again); --max-calls / --max-cost stop the run at a ceiling (exit 5);
--estimate prints what the units still to run would call and runs nothing. Exit codes: 0
done, 2 bad input (the message names the file or option and the field), 4 when --write-back
failed (the report is written), the code the analysis's verdict asks for (gate: 10 manual
review, 20 block, 30 not evaluable), else 6 when nothing was measured (the report is
written, the reason printed).
"""


def _record(analysis: Analysis[Any, Any, Any], path: Path | None, given: dict[str, Any],
            options: Mapping[str, str], out: Path) -> Any:  # fmt: skip
    """``analysis``'s config record: the file's (errors name the file and field) with the
    fields ``given`` as options over it (errors name the option). A record with an ``out``
    field the file does not set takes ``--out``'s (the option is ``analyze``'s own)."""
    import msgspec

    from groundtrace.analyzer import load_config
    from groundtrace.analyzer.errors import ConfigError

    base = None if path is None else load_config(analysis, path)
    if base is not None and not given:
        return base
    fields = {f.name for f in msgspec.structs.fields(analysis.config)}
    under = {"out": str(out)} if "out" in fields else {}
    data = {**under, **({} if base is None else msgspec.to_builtins(base)), **given}
    try:
        return msgspec.convert(data, type=analysis.config)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `$.")
        field = re.split(r"[.\[]", where.rstrip("`"))[0] or None
        if field in given:
            raise ConfigError(message, field=options[field]) from None
        if base is None:
            message += " (give --config FILE, or the field's option)"
        where_read = None if path is None else str(path)
        raise ConfigError(f"{message} in the {analysis.name} config", path=where_read,
                          field=field) from None  # fmt: skip


def _command(analysis: Analysis[Any, Any, Any]) -> Any:
    """``groundtrace analyze NAME``: its config record's fields as options over --config."""
    overrides = override_options(analysis.config, reserved=_RESERVED)

    def analyze_command(
        *,
        config: Annotated[
            Path | None,
            typer.Option(help="The analysis's config record, TOML or JSON (docs/analyses.md)."),
        ] = None,
        out: Annotated[Path, typer.Option(help="Run folder: reports, journal, cache.")],
        concurrency: Annotated[int | None, typer.Option(help=_CONCURRENCY)] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the result record as one JSON object.")
        ] = False,
        fields: dict[str, Any],
        write_back: WriteBackOptions,
        executor: ExecutorOptions,
        calls: CallOptions,
    ) -> None:
        from groundtrace.analyzer.errors import ConfigError

        if write_back.requested and analysis.verdicts is None:
            raise ConfigError(f"{analysis.name} has no per-case results to write back",
                              field="--write-back")  # fmt: skip
        with fields_as_options(overrides.option_names):  # a value the record's check refuses
            record = _record(analysis, config, fields, overrides.option_names, out)
        record, in_flight = with_concurrency(calls.over(record), concurrency)

        def show(result: Any, done: AnalysisRun[Any]) -> None:
            err_console.print(f"{analysis.name}: {done.units} unit(s) planned", highlight=False)
            _printer(as_json)(result, done)

        drive(
            analysis, record, out, calls=calls, in_flight=in_flight, as_json=as_json, show=show,
            executor=executor, write_back=write_back,
        )  # fmt: skip

    analyze_command.__annotations__["fields"] = overrides.record  # the group's parameter
    analyze_command.__doc__ = _HELP.format(title=analysis.title, name=analysis.name)
    command = handle_errors(uses(overrides, WriteBackOptions, ExecutorOptions, CallOptions)(
        analyze_command))  # fmt: skip
    app = typer.Typer()
    app.command(analysis.name)(command)
    app.command("-")(lambda: None)  # a group, so the command keeps its name
    return typer.main.get_group(app).commands[analysis.name]


class _AnalysisGroup(ListingGroup):
    """``analyze``'s commands: one per analysis this installation can run, each built from
    its config record when used (``analyze --help`` lists the names only)."""

    def list_commands(self, ctx: Any) -> list[str]:
        from groundtrace.analyzer import analyses

        return analyses()

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        from groundtrace.analyzer import get_analysis
        from groundtrace.analyzer.errors import ConfigError

        if self.listing:
            return TyperCommand(cmd_name, help=f"The {cmd_name} analysis (see --list).")
        from ._registry import escape_help

        try:
            command = _command(get_analysis(cmd_name))
        except ConfigError as exc:  # no such analysis, or its record cannot be loaded
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(exc.exit_code) from None
        escape_help(command)  # as the root group does for every other command
        return command


analyze_app = typer.Typer(
    cls=_AnalysisGroup,
    invoke_without_command=True,
    no_args_is_help=False,
    help="Run any analysis (built-in or a plugin's) from its config file; write its report.\n\n"
    "groundtrace analyze NAME --config FILE --out DIR: the config record read from the file, "
    "each of the record's fields also an option of its own over it (groundtrace analyze NAME "
    "--help lists them). Plugins name their analysis in the groundtrace.analyses entry-point "
    "group. Exit codes: those of the analysis's command (groundtrace analyze NAME --help).",
)


@analyze_app.callback()
@handle_errors
def analyze_callback(
    ctx: typer.Context,
    list_them: Annotated[
        bool, typer.Option("--list", help="List the analyses this installation can run.")
    ] = False,
) -> None:
    """Run any analysis (built-in or a plugin's) from its config file; write its report."""
    from groundtrace.analyzer import analyses, get_analysis
    from groundtrace.analyzer.errors import ConfigError

    if list_them:
        for known in analyses():
            try:
                title = get_analysis(known).title
            except ConfigError as exc:  # a broken plugin is named, not hidden
                title = f"(cannot be loaded: {exc})"
            typer.echo(f"{known:16} {title}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        raise ConfigError("analyze needs NAME (or --list)")


def register(app: typer.Typer) -> None:
    """Add ``groundtrace analyze`` to ``app``."""
    app.add_typer(analyze_app, name="analyze")
