"""``--write-back otlp|phoenix``: the options shared by the analysis commands, and the send."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import err_console

if TYPE_CHECKING:
    from groundtrace.analyzer.writeback import Linked

__all__ = ["OtlpEndpointOpt", "PhoenixUrlOpt", "WriteBack", "WriteBackOpt", "write_back"]


class WriteBack(StrEnum):
    """Where per-case results are written back to."""

    OTLP = "otlp"
    PHOENIX = "phoenix"


WriteBackOpt = Annotated[
    WriteBack | None,
    typer.Option(
        "--write-back",
        help="Also send per-case results, linked to the original spans: otlp "
        "(gen_ai.evaluation.result log records, on the span each result evaluates) or phoenix "
        "(trace annotations, and document annotations under the retrieved documents).",
    ),
]
OtlpEndpointOpt = Annotated[
    str,
    typer.Option(
        "--otlp-endpoint",
        envvar="OTEL_EXPORTER_OTLP_ENDPOINT",
        help="OTLP/HTTP endpoint for --write-back otlp (base URL or .../v1/logs).",
    ),
]
PhoenixUrlOpt = Annotated[
    str, typer.Option("--phoenix-url", help="Phoenix server for --write-back phoenix.")
]

#: Defaults of the two endpoints (the OTLP/HTTP and Phoenix default ports on loopback).
DEFAULT_OTLP_ENDPOINT = "http://127.0.0.1:4318"
DEFAULT_PHOENIX_URL = "http://127.0.0.1:6006"


def write_back(
    target: WriteBack | None, linked: Linked, *, otlp_endpoint: str, phoenix_url: str
) -> None:
    """Send the verdicts (after the results files are written); print what was sent.

    Raises:
        WriteBackError: the backend refused or could not be reached.
    """
    if target is None:
        return
    from groundtrace.analyzer.writeback import annotate_phoenix, export_otlp

    if linked.unlinked:
        shown = ", ".join(linked.unlinked[:10])
        err_console.print(
            f"write-back: {len(linked.unlinked)} result(s) have no trace to link to, "
            f"not written back: {shown}",
            highlight=False,
            markup=False,
        )
    if target is WriteBack.OTLP:
        sent = export_otlp(linked.verdicts, otlp_endpoint)
        where = f"as gen_ai.evaluation.result log records to {otlp_endpoint}"
    else:
        sent = annotate_phoenix(linked.verdicts, phoenix_url)
        where = f"as trace/document annotations to Phoenix at {phoenix_url}"
    err_console.print(f"write-back: {sent} result(s) {where}", highlight=False, markup=False)
