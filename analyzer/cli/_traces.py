"""``groundtrace traces``: summarise and convert trace files (a thin layer over collectors)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ._app import console, err_console, handle_errors
from ._send import send
from ._unreadable import StrictOpt, check_unreadable, nothing_read, read_error_rows

if TYPE_CHECKING:
    from groundtrace.collectors import ReadReport, Trace

__all__ = ["register", "traces_app"]

traces_app = typer.Typer(
    help="Read trace files (OTLP-JSON lines, OTLP protobuf, trace-model JSON lines, gzip, "
    "directories, '-' for stdin) or chat transcripts, and summarise or convert them to the "
    "trace model, or send them to an OTLP endpoint.",
    no_args_is_help=True,
)


class InputFormat(StrEnum):
    """What the input files hold."""

    OTLP = "otlp"
    TRANSCRIPT = "transcript"


PathsArg = Annotated[list[str], typer.Argument(help="Files, directories or '-' (stdin).")]
FormatOpt = Annotated[
    InputFormat,
    typer.Option("--format", help="otlp: OTLP trace files; transcript: chat transcripts (JSONL)."),
]


def _traces(paths: list[str], fmt: InputFormat, report: ReadReport) -> Iterator[Trace]:
    from groundtrace.collectors import read_traces
    from groundtrace.collectors.transcripts import read_transcripts

    if fmt is InputFormat.TRANSCRIPT:
        return read_transcripts(paths, report=report)
    return read_traces(paths, report=report)


def _finish(report: ReadReport, strict: bool, traces: int) -> None:
    """Exit non-zero when nothing could be read, or (``--strict``) when anything could not."""
    from groundtrace.analyzer.errors import TraceReadError

    if traces == 0:
        nothing_read("trace", report.errors)
        raise typer.Exit(TraceReadError.exit_code)
    check_unreadable(report.errors, strict)


def summarise(traces: Iterator[Trace], report: ReadReport) -> dict[str, Any]:
    """The summary object printed by ``traces summary --json``."""
    count = 0
    steps: Counter[str] = Counter()
    findings: Counter[str] = Counter()
    conventions: Counter[str] = Counter()
    with_answer = with_confidence = 0
    for trace in traces:
        count += 1
        steps.update(s.action or "(none)" for s in trace.steps)
        findings.update(f.kind for f in trace.findings)
        conventions.update(trace.conventions)
        with_answer += trace.answer is not None
        with_confidence += trace.confidence is not None
    return {
        "files": len(report.files),
        "records": report.records,
        "spans": report.spans,
        "traces": count,
        "traces_with_answer": with_answer,
        "traces_with_confidence": with_confidence,
        "steps_by_action": dict(sorted(steps.items())),
        "findings_by_kind": dict(sorted(findings.items())),
        "conventions": dict(sorted(conventions.items())),
        "read_errors": read_error_rows(report.errors),
    }


def _table(title: str, rows: dict[str, int], what: str) -> Table:
    table = Table(title=title)
    table.add_column(what)
    table.add_column("count", justify="right")
    for key, value in rows.items():
        table.add_row(key, str(value))
    return table


@traces_app.command("summary")
@handle_errors
def summary(
    paths: PathsArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    fmt: FormatOpt = InputFormat.OTLP,
    strict: StrictOpt = False,
) -> None:
    """Count traces, steps by action, findings by kind and read errors.

    Exits non-zero when no trace could be read.
    """
    from groundtrace.collectors import ReadReport

    report = ReadReport()
    result = summarise(_traces(paths, fmt, report), report)
    if as_json:
        console.print_json(json.dumps(result))
    else:
        console.print(
            f"{result['traces']} traces, {result['spans']} spans from {result['files']} "
            f"file(s); {result['traces_with_answer']} with an answer, "
            f"{result['traces_with_confidence']} with a confidence; "
            f"{len(report.errors)} read error(s)",
            highlight=False,
        )
        console.print(_table("steps by action", result["steps_by_action"], "action"))
        console.print(_table("findings by kind", result["findings_by_kind"], "finding"))
    _finish(report, strict, result["traces"])


@traces_app.command("convert")
@handle_errors
def convert(
    paths: PathsArg,
    out: Annotated[Path, typer.Option("--out", help="Output file: one τ JSON per line.")],
    fmt: FormatOpt = InputFormat.OTLP,
    strict: StrictOpt = False,
) -> None:
    """Write the normalised trace model (τ JSONL) of the inputs.

    Exits non-zero when no trace could be read.
    """
    from groundtrace.collectors import ReadReport

    report = ReadReport()
    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        for trace in _traces(paths, fmt, report):
            handle.write(trace.to_json())
            handle.write("\n")
            count += 1
    err_console.print(f"wrote {count} trace(s) to {out}", highlight=False)
    _finish(report, strict, count)


traces_app.command("send")(handle_errors(send))


def register(app: typer.Typer) -> None:
    """Add the ``traces`` command group to the root app."""
    app.add_typer(traces_app, name="traces")
