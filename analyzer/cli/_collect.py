"""``groundtrace collect ...``: the OTLP/HTTP receiver and the Phoenix puller."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Annotated, Final

import typer
from rich.markup import escape

from groundtrace.sdk import semconv as sc

from ._app import console, err_console, handle_errors

__all__ = ["PHOENIX_KEY_ENV", "TOKEN_ENV", "register"]

#: Environment variable holding the receiver's bearer token.
TOKEN_ENV: Final = f"{sc.ENV_PREFIX}RECEIVER_TOKEN"
#: Spans per page of a Phoenix pull: ``collectors.phoenix.DEFAULT_PAGE_SIZE``, spelled out so
#: that --help imports no collector (a test keeps the two equal).
PAGE_SIZE: Final = 1000
#: Environment variable holding a Phoenix API key.
PHOENIX_KEY_ENV: Final = "PHOENIX_API_KEY"
_MIB: Final = 1024 * 1024

collect_app = typer.Typer(
    help="Bring traces in: an OTLP/HTTP receiver, or a pull from Arize Phoenix.",
    no_args_is_help=True,
)


@collect_app.command("serve")
@handle_errors
def serve_command(
    out: Annotated[Path, typer.Option("--out", help="Directory of the OTLP-JSON lines files.")],
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 4318,
    token: Annotated[
        str | None,
        typer.Option(envvar=TOKEN_ENV, help="Require 'Authorization: Bearer TOKEN'."),
    ] = None,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body, MiB.")] = 16.0,
    max_inflight_requests: Annotated[
        int, typer.Option(help="Requests in flight before answering 429.")
    ] = 64,
    max_inflight_mb: Annotated[float, typer.Option(help="Body MiB in flight before 429.")] = 64.0,
    max_connections_per_client: Annotated[
        int, typer.Option(help="Open connections one client address may hold.")
    ] = 32,
    rotate_mb: Annotated[
        float, typer.Option(help="Rotate the output file at this size, MiB.")
    ] = 64.0,
    retry_after: Annotated[int, typer.Option(help="Retry-After seconds sent with 429.")] = 1,
    tls_cert: Annotated[
        Path | None, typer.Option(help="PEM certificate file: serve HTTPS.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(help="PEM private key of --tls-cert.")] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option(
            "--allow-unauthenticated",
            help="Bind beyond loopback without --token anyway (anyone could write traces).",
        ),
    ] = False,
) -> None:
    """Receive OTLP/HTTP traces on /v1/traces (log records on /v1/logs) and write them
    durably as OTLP-JSON lines.

    Every accepted batch is fsync'd before the 200. Stops cleanly on SIGTERM or Ctrl-C.
    Binding beyond loopback without --token is refused (exit 2): anyone could write
    traces. With --allow-unauthenticated it goes ahead and prints a loud warning.
    """
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.collectors.receiver import ExposedReceiverWarning, Receiver, ReceiverLimits

    for name, value in (
        ("--max-body-mb", max_body_mb),
        ("--max-inflight-requests", max_inflight_requests),
        ("--max-inflight-mb", max_inflight_mb),
        ("--max-connections-per-client", max_connections_per_client),
        ("--rotate-mb", rotate_mb),
    ):
        if value <= 0:
            raise ConfigError(f"{name} must be positive", field=name)
    limits = ReceiverLimits(
        max_body_bytes=int(max_body_mb * _MIB),
        max_inflight_requests=max_inflight_requests,
        max_inflight_bytes=int(max_inflight_mb * _MIB),
        max_connections_per_client=max_connections_per_client,
        rotate_bytes=int(rotate_mb * _MIB),
        retry_after_seconds=retry_after,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExposedReceiverWarning)
        receiver = Receiver(
            host,
            port,
            out,
            token=token,
            limits=limits,
            tls_cert=tls_cert,
            tls_key=tls_key,
            allow_unauthenticated=allow_unauthenticated,
        )
    for warning in caught:  # shown loudly, not as a one-line Python warning
        err_console.print(
            f"[bold red]WARNING:[/] {escape(str(warning.message))}", markup=True, highlight=False
        )

    def ready(bound: Receiver) -> None:
        auth = " (bearer token required)" if token else ""
        typer.echo(f"listening on {bound.endpoint}{auth}, writing to {out}")

    receiver.serve_forever(on_ready=ready)
    stats = receiver.stats
    refused = {code: n for code, n in sorted(stats.by_status.items()) if code != 200}
    console.print(
        f"stopped: {stats.batches} batches, {stats.spans} spans written to {out}"
        f" ({receiver.store_stats.fsyncs} fsyncs)" + (f"; refused {refused}" if refused else ""),
        highlight=False,
    )


@collect_app.command("phoenix")
@handle_errors
def phoenix_command(
    project: Annotated[str, typer.Option(help="Phoenix project name (or id).")],
    out: Annotated[Path, typer.Option("--out", help="Output file, one trace (τ) per line.")],
    url: Annotated[str, typer.Option(help="Phoenix base URL.")] = "http://127.0.0.1:6006",
    api_key: Annotated[
        str | None, typer.Option(envvar=PHOENIX_KEY_ENV, help="Phoenix API key, if auth is on.")
    ] = None,
    page_size: Annotated[int, typer.Option(help="Spans per page (1..1000).")] = PAGE_SIZE,
) -> None:
    """Pull every span of a Phoenix project and write the rebuilt traces as JSON lines."""
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.collectors.model import dumps
    from groundtrace.collectors.phoenix import pull_phoenix_traces

    if not 1 <= page_size <= 1000:
        raise ConfigError("--page-size must be within 1..1000", field="--page-size")
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    findings = 0
    # Write to a temporary file and rename, so a failed pull never leaves a partial output.
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for trace in pull_phoenix_traces(url, project, api_key=api_key, page_size=page_size):
                handle.write(dumps(trace) + "\n")
                count += 1
                findings += len(trace.findings)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    err_console.print(
        f"{count} traces from project {project!r} written to {out} ({findings} findings)",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add the ``collect`` command group to the root app."""
    app.add_typer(collect_app, name="collect")
