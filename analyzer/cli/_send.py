"""``groundtrace traces send``: stored traces into the user's stack over OTLP."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ._app import console
from ._unreadable import check_unreadable, nothing_read, read_error_rows

__all__ = ["send"]

_PROTOCOLS = ("http/protobuf", "grpc")


def _headers(values: list[str]) -> dict[str, str]:
    from groundtrace.analyzer.errors import ConfigError

    headers: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--header {value!r}: expected KEY=VALUE", field="--header")
        headers[key.strip()] = text.strip()
    return headers


def send(
    paths: Annotated[
        list[str],
        typer.Argument(help="OTLP trace files, directories (the receiver's folder) or '-'."),
    ],
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            help="OTLP endpoint: http://host:4318 (or its /v1/traces URL); for grpc "
            "http(s)://host:4317.",
        ),
    ],
    protocol: Annotated[
        str, typer.Option("--protocol", help="http/protobuf (default) or grpc.")
    ] = "http/protobuf",
    service: Annotated[
        str | None,
        typer.Option("--service", help="Set the resource's service.name (else kept as stored)."),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project", help="Set the Phoenix project (resource openinference.project.name)."
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", help="Request header KEY=VALUE (repeatable), e.g. an API key."),
    ] = None,
    batch_spans: Annotated[
        int, typer.Option("--batch-spans", min=1, help="Spans per export request.")
    ] = 512,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Timeout of one request, seconds.")
    ] = 10.0,
    retries: Annotated[
        int,
        typer.Option(
            "--retries",
            min=0,
            help="Retries of a request answered 429/502/503/504 or not answered (after the "
            "server's Retry-After, else a backoff from 0.5 s doubling).",
        ),
    ] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Send stored traces to an OTLP endpoint, ids and every span field kept as stored.

    Re-exports the stored OTLP exports (OTLP-JSON lines, protobuf, gzip, directories such
    as the receiver's folder) so that verdicts written back later land on spans the
    endpoint already shows. Unreadable input is named (file:line) and skipped; log records
    are not sent. Exits 2 when nothing could be read, 4 when any span could not be sent.
    """
    from groundtrace.analyzer._send import Protocol, send_exports
    from groundtrace.analyzer.errors import ConfigError, TraceReadError, WriteBackError
    from groundtrace.collectors.readers import ReadReport, read_exports

    if protocol not in _PROTOCOLS:
        raise ConfigError(
            f"--protocol {protocol!r}: expected one of {', '.join(_PROTOCOLS)}", field="--protocol"
        )
    read = ReadReport()
    sent = send_exports(
        read_exports(paths, report=read),
        endpoint,
        protocol=Protocol(protocol),
        service=service,
        project=project,
        headers=_headers(header or []),
        batch_spans=batch_spans,
        timeout=timeout,
        retries=retries,
    )
    result = {
        "files": len(read.files),
        "spans_read": read.spans,
        "spans_sent": sent.spans_sent,
        "spans_failed": sent.spans_failed,
        "spans_not_tried": sent.spans_not_tried,
        "requests": sent.requests,
        "retries": sent.retries,
        "log_records_not_sent": read.log_records,
        "failures": sent.failures,
        "read_errors": read_error_rows(read.errors),
    }
    if as_json:
        console.print_json(json.dumps(result))
    else:
        console.print(
            f"sent {sent.spans_sent} of {read.spans} span(s) to {endpoint} in {sent.requests} "
            f"request(s) ({sent.retries} retries); {sent.spans_failed} failed, "
            f"{sent.spans_not_tried} not tried; {len(read.errors)} read error(s)"
            + (f"; {read.log_records} log record(s) not sent" if read.log_records else ""),
            highlight=False,
        )
    if read.spans == 0:
        nothing_read("span", read.errors)
        check_unreadable(read.errors, strict=False)
        raise typer.Exit(TraceReadError.exit_code)
    check_unreadable(read.errors, strict=False)
    failed = sent.spans_failed + sent.spans_not_tried
    if failed:
        what = "nothing could be sent" if sent.spans_sent == 0 else f"{failed} span(s) not sent"
        reasons = "; ".join(dict.fromkeys(sent.failures[:5]))
        raise WriteBackError(f"{what}: {reasons}")
