"""``groundtrace attribution TRACES... --out DIR``: which evidence caused each answer.

A front-end over the attribution analysis (``groundtrace.analyzer.attribution``): its options
make the analysis's :class:`Config`, which the one driver runs (:func:`drive`: lock, journal,
budget, ``--estimate``, reports, write-back, exit code), as ``groundtrace analyze attribution
--config`` does; the printing is its own.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Final

import typer

from ._analyze import drive, finish
from ._app import console, handle_errors, print_reading
from ._budget import CallOptions
from ._executor import ExecutorOptions
from ._interventions import _kwargs
from ._options import fields_as_options, uses, without
from ._writeback import WriteBackOptions

__all__ = ["register"]

#: The option each field of ``analyzer.attribution.Config`` that is checked comes from.
_OPTIONS: Final = {
    "traces": "TRACES",
    "model_path": "--model-path",
    "endpoint": "--endpoint",
    "max_passes": "--max-passes",
    "n_ablations": "--n-ablations",
    "threads": "--threads",
    "n_ctx": "--n-ctx",
    "replay": "--replay",
    "method": "--method",
}


class Method(StrEnum):
    """The attribution methods."""

    LEAVE_ONE_OUT = "leave-one-out"
    HIERARCHICAL = "hierarchical"
    SHAPLEY = "shapley"
    CONTEXTCITE = "contextcite"


@handle_errors
@uses(WriteBackOptions, without(CallOptions, "rate_limit"))
def attribution_command(
    traces: Annotated[list[str], typer.Argument(help="Trace files or directories.")],
    out: Annotated[
        Path, typer.Option(help="Run folder: attribution.md, .json, .html, journal, scores.")
    ],
    model_path: Annotated[
        Path | None,
        typer.Option(
            "--model-path",
            help="A GGUF model scored in this process (tier in-process). With neither this "
            "nor --endpoint: the default embedded model (qwen2.5-coder-0.5b, the demo's; "
            "needs the llm extra and the model packages).",
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            help="An OpenAI-compatible base URL returning prompt log-probabilities (vLLM "
            "/v1/completions with echo and logprobs; tier endpoint)."
        ),
    ] = None,
    endpoint_model: Annotated[
        str, typer.Option("--endpoint-model", help="The model name the endpoint serves.")
    ] = "default",
    method: Annotated[
        Method,
        typer.Option(
            help="leave-one-out (k+1 passes a trace), hierarchical (items, then sentences, "
            "<= --max-passes), shapley (2^k passes, k <= 6), contextcite (--n-ablations + 1)."
        ),
    ] = Method.LEAVE_ONE_OUT,
    max_passes: Annotated[
        int, typer.Option("--max-passes", help="Pass budget of hierarchical, per trace.")
    ] = 24,
    n_ablations: Annotated[
        int, typer.Option("--n-ablations", help="Random ablations of contextcite.")
    ] = 32,
    seed: Annotated[int, typer.Option(help="Seed of contextcite's random masks.")] = 0,
    threads: Annotated[int, typer.Option(help="CPU threads of the in-process model.")] = 1,
    n_ctx: Annotated[
        int, typer.Option("--n-ctx", help="Context length (tokens) of the in-process model.")
    ] = 4096,
    replay: Annotated[
        str | None,
        typer.Option(
            help="The behavioural tier (no log-probabilities): replay the app, 'recorded' (the "
            "trace's entry point) or module:qualname, with every evidence item and without "
            "each (k+1 replays; leave-one-out only); an item scores 1 when removing it changes "
            "the answer, plus CUE-R's divergence D."
        ),
    ] = None,
    replay_kwarg: Annotated[
        list[str] | None,
        typer.Option(help="NAME=VALUE overriding a recorded keyword argument (repeatable)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result record as one JSON object.")
    ] = False,
    *,
    write_back: WriteBackOptions,
    calls: CallOptions,
) -> None:
    """Which evidence caused each answer: the log-probability of the recorded answer when
    each evidence item is removed from the recorded prompt.

    Reads the answer call's prompt, the evidence items whose text is in it and the answer
    from each trace (content capture on); only the answer's tokens are scored. Writes
    attribution.md (per answer the top evidence with its text, how concentrated the
    attribution is, whether the answer depends on its context), attribution.json and
    attribution.html in OUT; a re-run into OUT resumes and makes no model pass twice.
    --max-calls counts model passes (exit 5); --estimate prints the passes the traces still
    to attribute would take and runs nothing. With --write-back, each evidence item's score
    goes to the retrieval span (Phoenix document annotations, OTLP evaluation records).
    Exit codes: 0 done, 2 bad input (the message names the file and field), 3 model or
    endpoint unavailable, 4 write-back failed (the report is written), 6 nothing measured
    (no trace could be attributed; the report is written, the reason printed). The run is
    the one `groundtrace analyze attribution --config` runs: the same reports and exit codes.
    """
    from groundtrace.analyzer._results import to_builtins
    from groundtrace.analyzer.attribution import ANALYSIS, Config

    with fields_as_options(_OPTIONS):
        config = Config(
            traces=tuple(traces),
            model_path=None if model_path is None else str(model_path),
            endpoint=endpoint,
            endpoint_model=endpoint_model,
            method=method.value,
            max_passes=max_passes,
            n_ablations=n_ablations,
            seed=seed,
            threads=threads,
            n_ctx=n_ctx,
            replay=replay,
            replay_kwargs=_kwargs(replay_kwarg or []),
        )
        done = drive(  # one model: one trace at a time
            ANALYSIS, config, out, executor=ExecutorOptions(), settings=calls.settings(None),
            estimate=calls.estimate, in_flight=1, write_back=write_back, as_json=as_json,
        )  # fmt: skip
    if done is None:
        return
    if as_json:
        import json

        typer.echo(json.dumps(to_builtins(done.result)))
    else:
        print_reading(done.reading)
        for report in done.reports:
            console.print(f"report: {report}", markup=False, highlight=False)
    finish(done)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace attribution`` to ``app``."""
    app.command("attribution")(attribution_command)
