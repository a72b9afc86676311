"""``groundtrace attribution TRACES... --out DIR``: which evidence caused each answer.

A front-end over the attribution analysis (``groundtrace.analyzer.attribution``): its options
make the analysis's :class:`Config`, which the one driver runs (:func:`drive`: lock, journal,
budget, ``--estimate``, reports, write-back, exit code), as ``groundtrace analyze attribution
--config`` does; the printing is its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.analyzer.attribution import Config
from groundtrace.analyzer.backends import DEFAULT_MODEL

from ._analyze import drive
from ._app import handle_errors
from ._budget import CallOptions
from ._fields import record_options
from ._options import fields_as_options, uses, without
from ._writeback import WriteBackOptions

__all__ = ["register"]

#: ``groundtrace attribution``: ``attribution.Config``'s fields (TRACES the argument).
ATTRIBUTION_OPTIONS = record_options(
    Config,
    argument="traces",
    help={
        "model_path": "A GGUF model scored in this process (tier in-process). With neither "
        f"this nor --endpoint: the default embedded model ({DEFAULT_MODEL}, the demo's; needs "
        "the llm extra and the model packages)."
    },
)


@handle_errors
@uses(ATTRIBUTION_OPTIONS, WriteBackOptions, without(CallOptions, "rate_limit"))
def attribution_command(
    *,
    config: Config,
    out: Annotated[
        Path, typer.Option(help="Run folder: attribution.md, .json, .html, journal, scores.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result record as one JSON object.")
    ] = False,
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
    from groundtrace.analyzer.attribution import ANALYSIS

    drive(  # one model: one trace at a time
        ANALYSIS, config, out, calls=calls, in_flight=1, as_json=as_json, write_back=write_back,
        naming=fields_as_options(ATTRIBUTION_OPTIONS.option_names),
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``groundtrace attribution`` to ``app``."""
    app.command("attribution")(attribution_command)
