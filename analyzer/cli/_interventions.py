"""``groundtrace interventions``: counterfactual evidence interventions on captured traces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ._app import console, err_console, handle_errors
from ._executor import ExecutorName, ExecutorOpt, RayAddressOpt, RayWorkersOpt, open_executor

if TYPE_CHECKING:
    from groundtrace.analyzer.interventions import Hardness

__all__ = ["register"]


def _kwargs(pairs: list[str]) -> dict[str, str]:
    from groundtrace.analyzer.errors import ConfigError

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError(f"expected NAME=VALUE, got {pair!r}", field="--replay-kwarg")
        out[name] = value
    return out


def _hardness(value: str) -> Hardness | None:
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.analyzer.interventions import Hardness

    if value == "any":
        return None
    try:
        return Hardness(value)
    except ValueError:
        raise ConfigError(f"use any, easy, medium or hard, got {value!r}") from None


def register(app: typer.Typer) -> None:
    """Add ``groundtrace interventions`` to ``app``."""

    @app.command("interventions")
    @handle_errors
    def interventions(
        traces: Annotated[list[Path], typer.Argument(help="Trace files or folders.")],
        out: Annotated[Path, typer.Option(help="Run folder (created; reused to resume).")],
        cases: Annotated[
            Path | None, typer.Option(help="Case file (JSONL) joined by case_id: gold labels.")
        ] = None,
        pool_dataset: Annotated[
            Path | None,
            typer.Option(help="HotpotQA-layout JSONL supplying replacement candidates."),
        ] = None,
        replay: Annotated[
            str | None,
            typer.Option(help="Function replay: module:qualname, or 'recorded' (the trace's)."),
        ] = None,
        endpoint: Annotated[
            str | None, typer.Option(help="Endpoint replay: OpenAI-compatible base URL.")
        ] = None,
        model: Annotated[str | None, typer.Option(help="Model name (endpoint replay).")] = None,
        replay_kwarg: Annotated[
            list[str] | None,
            typer.Option(help="NAME=VALUE overriding a recorded keyword argument (repeatable)."),
        ] = None,
        operators: Annotated[
            list[str] | None,
            typer.Option(help="REMOVE, REPLACE, DUPLICATE, ZERO, RANDOM, JOINT (default all)."),
        ] = None,
        limit: Annotated[int | None, typer.Option(help="Use the first N traces.")] = None,
        concurrency: Annotated[int, typer.Option(help="Replays in flight.")] = 4,
        seed: Annotated[int, typer.Option(help="Seed sent to the model.")] = 0,
        similarity: Annotated[str, typer.Option(help="Replacement hardness: similarity.")] = "any",
        relevance: Annotated[str, typer.Option(help="Replacement hardness: relevance.")] = "any",
        recompute_original: Annotated[
            bool, typer.Option(help="Replay the unperturbed evidence too and use it as τ.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        executor: ExecutorOpt = ExecutorName.LOCAL,
        ray_address: RayAddressOpt = None,
        ray_workers: RayWorkersOpt = 2,
    ) -> None:
        """Replay each trace with evidence removed, replaced, duplicated or zeroed.

        Scores correctness, grounding, calibration and trace divergence with paired bootstrap
        CIs, assigns evidence roles and runs joint ablation. Writes results.jsonl,
        summary.json, summary.md and report.html into OUT; a killed run resumes there.
        """
        from groundtrace.analyzer._results import encode, to_builtins
        from groundtrace.analyzer.interventions import (
            PlanSettings,
            RunConfig,
            operator_table_md,
            parse_operators,
            run_interventions,
        )

        if replay is None and endpoint is None:
            replay = "recorded"
        plan = PlanSettings(
            operators=parse_operators(operators),
            model_seed=seed,
            similarity=_hardness(similarity),
            relevance=_hardness(relevance),
            recompute_original=recompute_original,
        )
        config = RunConfig(
            out_dir=out, replay=replay, endpoint=endpoint, model=model,
            kwarg_overrides=_kwargs(replay_kwarg or []), plan=plan, limit=limit,
            concurrency=concurrency,
        )  # fmt: skip
        with open_executor(executor, ray_address, ray_workers, concurrency) as runner:
            if as_json:
                result = run_interventions(
                    traces, config, cases_path=cases, pool_dataset=pool_dataset, executor=runner
                )
                typer.echo(encode(result.summary).decode())
                return
            with Progress(
                TextColumn("[bold]replaying"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), console=err_console, transient=True,
            ) as bar:  # fmt: skip
                task = bar.add_task("units", total=None)
                result = run_interventions(
                    traces, config, cases_path=cases, pool_dataset=pool_dataset, executor=runner,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )  # fmt: skip
        s = result.summary
        console.print(operator_table_md(s))
        console.print(f"calls: {to_builtins(s.calls)}")
        console.print(f"failed units: {s.failed_units or 'none'}")
        console.print(f"reports: {out / 'summary.md'}  {out / 'report.html'}")
