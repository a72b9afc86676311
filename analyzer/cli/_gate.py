"""``groundtrace gate ...``: the release gate commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from groundtrace.analyzer.gate import Config

from ._analyze import drive
from ._app import console, err_console, handle_errors, print_reading
from ._budget import CallOptions
from ._executor import ExecutorOptions
from ._fields import record_options
from ._options import fields_as_options, uses
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun
    from groundtrace.analyzer.gate import GateResult

__all__ = ["register"]

gate_app = typer.Typer(help="Release gate: promote / manual review / block / not evaluable.")

#: ``gate run``: the runs compared, the cases and the profile (``gate.Config``'s fields).
RUN_OPTIONS = record_options(Config, declared={"strict": (StrictOpt, bool)})

#: Monte-Carlo draws per replication in the simulation (the live gate uses the profile's S).
SIMULATION_SAMPLES = 2000


@gate_app.command("simulate")
@handle_errors
def simulate_command(
    reps: Annotated[int, typer.Option(help="Replications per cell.")] = 1000,
    seed: Annotated[int, typer.Option(help="Root seed.")] = 20260709,
    samples: Annotated[
        int, typer.Option(help="Monte-Carlo draws of rho per replication.")
    ] = SIMULATION_SAMPLES,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Operating characteristics of the gate vs the naive gate (SPEC 4.5 study)."""
    import msgspec

    from groundtrace.analyzer._results import to_builtins
    from groundtrace.analyzer.gate import BUILTIN_PROFILES, SCENARIOS, load_profile, simulate

    profiles = {
        name: msgspec.structs.replace(load_profile(name).bayes, samples=samples)
        for name in BUILTIN_PROFILES
    }
    sizes = (20, 50, 100, 200)
    with Progress(console=console, transient=True, disable=as_json) as progress:
        task = progress.add_task("simulating", total=len(SCENARIOS) * len(sizes))
        cells = simulate(
            sizes=sizes,
            profiles=profiles,
            reps=reps,
            seed=seed,
            progress=lambda: progress.advance(task),
        )
    if as_json:
        typer.echo(json.dumps({"cells": to_builtins(cells)}))
        return
    table = Table(title=f"Gate operating characteristics ({reps} reps/cell, seed {seed})")
    for col in (
        "scenario",
        "N",
        "profile",
        "promote",
        "review",
        "block",
        "mean ρ",
        "naive promote",
    ):
        table.add_column(col, justify="right" if col not in ("scenario", "profile") else "left")
    for c in cells:
        table.add_row(
            c.scenario,
            str(c.n),
            c.profile,
            f"{c.promote_rate:.3f}",
            f"{c.review_rate:.3f}",
            f"{c.block_rate:.3f}",
            f"{c.mean_rho:.3f}",
            f"{c.naive_promote_rate:.3f}",
        )
    console.print(table)


@gate_app.command("run")
@handle_errors
@uses(RUN_OPTIONS, WriteBackOptions, ExecutorOptions, CallOptions)
def run_command(
    *,
    config: Config,
    out: Annotated[Path, typer.Option(help="Report folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report.")] = False,
    write_back: WriteBackOptions,
    executor: ExecutorOptions,
    calls: CallOptions,
) -> None:
    """Decide whether the candidate may ship.

    Exit codes: 0 promote, 10 manual review, 20 block, 30 not evaluable; 2 on bad input or a
    blocking curation finding (the gate did not run); 4 when --write-back failed (the report
    is written). Each case's deterministic checks and guardrails run on --executor (the
    report is the same on Ray). A case that declares a command path (required reads, calls,
    values) and whose trace fails it (groundtrace paths) is a failed check
    paths.command_path: manual review, or block for a critical case or with the profile's
    paths.critical. Unreadable trace lines are skipped, named and noted in the
    report (--strict refuses them, exit 2, before any report is written). The gate calls
    no model: --max-calls / --max-cost are accepted and never reached; --estimate is refused.
    The same run as groundtrace analyze gate --config FILE with these settings.
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.gate import ANALYSIS

    def show(result: GateResult, done: AnalysisRun[GateResult]) -> None:
        for found in result.findings:
            err_console.print(f"finding: {found}", highlight=False, markup=False)
        check_unreadable(result.unreadable, False)
        report = result.report
        if as_json:
            typer.echo(encode(report).decode())
        else:
            console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False)
            print_reading(done.reading)
            console.print(f"report: {done.reports[0]}  (exit code {report.exit_code})")

    drive(  # planning refuses blocking curation findings, and unreadable lines under --strict
        ANALYSIS, config, out, calls=calls, in_flight=1, as_json=as_json, show=show,
        executor=executor, write_back=write_back,
        naming=fields_as_options(RUN_OPTIONS.option_names),
    )  # fmt: skip


@gate_app.command("verify")
@handle_errors
def verify_command(
    report: Annotated[Path, typer.Argument(help="report.json of a gate run.")],
) -> None:
    """Re-derive a gate decision from its stored snapshots; exit 1 if it differs."""
    from groundtrace.analyzer.gate import verify_report

    same, explanation = verify_report(report)
    console.print(("verified: " if same else "MISMATCH: ") + explanation, markup=False)
    raise typer.Exit(0 if same else 1)


@gate_app.command("curate")
@handle_errors
def curate_command(
    traces: Annotated[list[str], typer.Argument(help="Trace files or folders.")],
    out: Annotated[Path, typer.Option(help="Case file (JSONL) to write.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
) -> None:
    """Draft gate cases from traces: PII/secrets redacted before storing, findings flagged."""
    from groundtrace.analyzer._results import encode, write
    from groundtrace.analyzer.gate import CurationReport, curate
    from groundtrace.collectors.readers import ReadReport, read_traces

    read = ReadReport()
    drafted, findings = curate(read_traces(traces, report=read))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in drafted), encoding="utf-8"
    )
    summary = CurationReport(
        cases=len(drafted),
        findings=tuple(findings),
        read_errors=tuple(str(e) for e in read.errors),
    )
    write(out.parent / (out.stem + ".curation.json"), summary)
    if as_json:
        typer.echo(encode(summary).decode())
    else:
        console.print(f"{len(drafted)} case(s) written to {out}")
        for f in findings:
            console.print(
                f"- {f.kind}{' (blocking)' if f.blocking else ''}: {f.message}", markup=False
            )
    if any(f.blocking for f in findings):
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the ``gate`` group to the root app."""
    app.add_typer(gate_app, name="gate")
