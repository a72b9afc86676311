"""``groundtrace analyze NAME --config FILE --out DIR``: any analysis, through its public shape.

The one command every analysis has, built-in or added by a plugin
(:mod:`groundtrace.analyzer._analysis`): the config record is read from the TOML or JSON file,
then ``plan`` → ``run`` on the executor → ``write_report`` → ``reading``, and ``--write-back``
sends the analysis's per-case verdicts. The analysis-specific commands (``paths``, ``gate run``,
``interventions``...) are friendlier front-ends over the same names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import console, err_console, handle_errors, print_reading
from ._executor import ExecutorOptions
from ._options import uses
from ._writeback import WriteBackOptions

__all__ = ["register"]


@handle_errors
@uses(WriteBackOptions, ExecutorOptions)
def analyze_command(
    name: Annotated[
        str | None, typer.Argument(help="The analysis (see --list), e.g. paths.")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="The analysis's config record, TOML or JSON (docs/analyses.md)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Report folder.")] = None,
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
) -> None:
    """Run any analysis (built-in or a plugin's) from its config file; write its report.

    Plugins name their analysis in the groundtrace.analyses entry-point group. Exit codes:
    0 done, 2 bad input (the message names the file and field), 4 when --write-back failed
    (the report is written), 6 when nothing was measured (the report is written, the reason
    printed), else the code the analysis's verdict asks for (gate: 10 manual review, 20
    block).
    """
    from groundtrace.analyzer import analyses, get_analysis, load_config, to_builtins
    from groundtrace.analyzer.errors import ConfigError, NothingMeasuredError

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
    settings = load_config(analysis, config)
    units = analysis.plan(settings)
    err_console.print(f"{analysis.name}: {len(units)} unit(s) planned", highlight=False)
    with executor.open(concurrency) as runner:
        result = analysis.run(units, settings, runner)
    from groundtrace.analyzer._runlock import RunFolderLock

    with RunFolderLock.acquire(out):  # the run may have held it; the report's writer does now
        report = analysis.write_report(result, out)
    if (verdicts := analysis.verdicts) is not None:
        write_back.send(lambda: verdicts(result, settings))
    if as_json:
        typer.echo(json.dumps(to_builtins(result)))
    else:
        print_reading(analysis.reading(result))
        console.print(f"report: {report}", markup=False, highlight=False)
    why = analysis.nothing_measured(result)
    if why is not None:
        raise NothingMeasuredError(f"nothing measured: {why} (report: {report})")
    code = 0 if analysis.exit_code is None else analysis.exit_code(result)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace analyze`` to ``app``."""
    app.command("analyze")(analyze_command)
