"""``--write-back otlp|phoenix``: the options shared by the analysis commands
(:class:`WriteBackOptions`), and the send."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import err_console

if TYPE_CHECKING:
    from groundtrace.analyzer.writeback import Linked

__all__ = ["WriteBack", "WriteBackOptions"]


class WriteBack(StrEnum):
    """Where per-case results are written back to."""

    OTLP = "otlp"
    PHOENIX = "phoenix"


#: Defaults of the two endpoints (the OTLP/HTTP and Phoenix default ports on loopback).
DEFAULT_OTLP_ENDPOINT = "http://127.0.0.1:4318"
DEFAULT_PHOENIX_URL = "http://127.0.0.1:6006"


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteBackOptions:
    """The write-back options of a command (an option group, see :mod:`._options`).

    Attributes:
        write_back_to: ``--write-back``: the backend, or ``None`` to write nothing back.
        otlp_endpoint: ``--otlp-endpoint``: the OTLP/HTTP endpoint of ``--write-back otlp``.
        phoenix_url: ``--phoenix-url``: the Phoenix server of ``--write-back phoenix``.
    """

    write_back_to: Annotated[
        WriteBack | None,
        typer.Option(
            "--write-back",
            help="Also send per-case results, linked to the original spans: otlp "
            "(gen_ai.evaluation.result log records, on the span each result evaluates) or "
            "phoenix (trace annotations, and document annotations under the retrieved "
            "documents).",
        ),
    ] = None
    otlp_endpoint: Annotated[
        str,
        typer.Option(
            "--otlp-endpoint",
            envvar="OTEL_EXPORTER_OTLP_ENDPOINT",
            help="OTLP/HTTP endpoint for --write-back otlp (base URL or .../v1/logs).",
        ),
    ] = DEFAULT_OTLP_ENDPOINT
    phoenix_url: Annotated[
        str, typer.Option("--phoenix-url", help="Phoenix server for --write-back phoenix.")
    ] = DEFAULT_PHOENIX_URL

    @property
    def requested(self) -> bool:
        """Whether ``--write-back`` was given."""
        return self.write_back_to is not None

    def send(self, linked: Callable[[], Linked]) -> None:
        """Send the verdicts ``linked()`` makes (after the results files are written; called
        only with ``--write-back``); print what was sent and what had no trace to link to.

        Raises:
            WriteBackError: the backend refused or could not be reached.
        """
        if self.write_back_to is None:
            return
        from groundtrace.analyzer.writeback import annotate_phoenix, export_otlp

        found = linked()
        if found.unlinked:
            shown = ", ".join(found.unlinked[:10])
            err_console.print(
                f"write-back: {len(found.unlinked)} result(s) have no trace to link to, "
                f"not written back: {shown}",
                highlight=False,
                markup=False,
            )
        if self.write_back_to is WriteBack.OTLP:
            sent = export_otlp(found.verdicts, self.otlp_endpoint)
            where = f"as gen_ai.evaluation.result log records to {self.otlp_endpoint}"
        else:
            sent = annotate_phoenix(found.verdicts, self.phoenix_url)
            where = f"as trace/document annotations to Phoenix at {self.phoenix_url}"
        err_console.print(f"write-back: {sent} result(s) {where}", highlight=False, markup=False)
