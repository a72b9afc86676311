"""``groundtrace gate ...``: the release gate commands."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from groundtrace.analyzer.gate import BUILTIN_PROFILES, SCENARIOS, load_profile, simulate

from ._app import console, handle_errors

__all__ = ["register"]

gate_app = typer.Typer(help="Release gate: promote / manual review / block / not evaluable.")

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
    profiles = {
        name: dataclasses.replace(load_profile(name).bayes, samples=samples)
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
        typer.echo(json.dumps({"cells": [c.to_dict() for c in cells]}))
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


def register(app: typer.Typer) -> None:
    """Add the ``gate`` group to the root app."""
    app.add_typer(gate_app, name="gate")
