"""``groundtrace monitor ...``: sampled checks on live traffic, a backfill over stored traces."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._app import console, err_console, handle_errors
from ._options import uses
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer.monitor import Monitor

__all__ = ["register"]

monitor_app = typer.Typer(
    help="Online evaluation: rules run on a sample of live traces, with windows and alerts."
)

RulesOpt = Annotated[Path, typer.Option(help="Rules file (TOML, docs/monitor.md).")]
StateOpt = Annotated[
    Path, typer.Option(help="The monitor's folder: journal, status.json, alerts.jsonl.")
]


def _say(line: str) -> None:
    console.print(line, markup=False, highlight=False)


def _monitor(rules: Path, state: Path, write_back: WriteBackOptions) -> Monitor:
    from groundtrace.analyzer.monitor import Monitor, load_rules

    def send(linked: Any) -> None:
        write_back.send(lambda: linked)

    chosen = send if write_back.write_back_to is not None else None
    return Monitor(load_rules(rules), state, write_back=chosen, say=_say)


@monitor_app.command("run")
@handle_errors
@uses(WriteBackOptions)
def run_command(
    rules: RulesOpt,
    state: StateOpt,
    traces: Annotated[
        Path,
        typer.Option(help="Folder of the receiver's OTLP-JSON lines files (followed as it grows)."),
    ],
    port: Annotated[
        int | None,
        typer.Option(help="Also receive OTLP/HTTP on this port, writing into --traces."),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface of --port.")] = "127.0.0.1",
    token: Annotated[
        str | None,
        typer.Option(envvar="GROUNDTRACE_RECEIVER_TOKEN", help="Bearer token --port requires."),
    ] = None,
    poll: Annotated[float, typer.Option(help="Seconds between reads of --traces.")] = 0.25,
    *,
    write_back: WriteBackOptions,
) -> None:
    """Evaluate live traces under the rules until SIGTERM or Ctrl-C.

    The traces are read from --traces behind the receiver (with --port the monitor runs
    one, as `collect serve` does; else it follows a receiver or Collector file exporter
    writing there), so evaluation never slows ingest. Each rule's sampled, complete traces
    are evaluated once (the journal in --state survives restarts and kills), their verdicts
    written back (--write-back), their windows kept in --state/status.json and incidents
    POSTed to the rules' webhook. Exit codes: 0 stopped by a signal (the batch in flight
    finishes), 2 bad rules or options, an address that cannot be bound or a --state another
    monitor holds; any other failure exits non-zero for a supervisor to restart the monitor,
    which resumes.
    """
    import asyncio
    import os
    import signal

    monitor = _monitor(rules, state, write_back)
    receiver = None
    if port is not None:  # ingest in its own process: its own interpreter lock, full priority
        receiver = _receiver(host, port, traces, token)
        os.nice(10)  # and evaluation yields the CPU to it

    async def main() -> dict[str, Any]:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):  # the process's handler: a batch's run
            signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stop.set))  # puts it back
        _say(f"monitoring {traces} with {len(monitor.rules.rule)} rule(s); state in {state}")
        with monitor:
            return await monitor.follow(traces, stop=stop, poll=poll)

    try:
        final = asyncio.run(main())
    finally:
        if receiver is not None:
            receiver.terminate()  # it finishes the requests in flight and fsyncs
            receiver.wait(120)
    _summary(final)


def _die_with_parent() -> None:
    """In the receiver's process, before it runs: SIGTERM when the monitor dies (a SIGKILL
    too), so a supervisor's restart finds the port free (Linux; elsewhere a no-op)."""
    import contextlib
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _receiver(host: str, port: int, traces: Path, token: str | None) -> subprocess.Popen[str]:
    """``groundtrace collect serve`` as a child process, once it listens.

    Raises:
        InputError: it could not start (the address is taken, the folder cannot be used).
    """
    import os
    import sys
    import threading

    from groundtrace.analyzer.errors import InputError

    cli = "from groundtrace.analyzer.cli import main; main()"
    command = [sys.executable, "-c", cli, "collect", "serve", "--host", host, "--port",
               str(port), "--out", str(traces)]  # fmt: skip
    env = {**os.environ, **({"GROUNDTRACE_RECEIVER_TOKEN": token} if token else {})}
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        preexec_fn=_die_with_parent,  # noqa: PLW1509 (only prctl, before exec)
    )  # fmt: skip
    assert child.stdout is not None
    first = child.stdout.readline()
    if not first.startswith("listening on "):
        rest = child.stdout.read()
        child.wait(60)
        raise InputError(f"the receiver did not start: {(first + rest).strip()}",
                         field="--port")  # fmt: skip
    out = child.stdout
    threading.Thread(target=lambda: [None for _ in out], daemon=True).start()  # drain it
    _say(f"receiving on {first.split()[2].rstrip(',')}, writing to {traces}")
    return child


@monitor_app.command("backfill")
@handle_errors
@uses(WriteBackOptions)
def backfill_command(
    paths: Annotated[list[Path], typer.Argument(help="Stored OTLP-JSON trace files or folders.")],
    rules: RulesOpt,
    state: StateOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
    *,
    write_back: WriteBackOptions,
) -> None:
    """Apply the rules to stored traces: the same sampling and journal as the live monitor.

    Traces the monitor (or an earlier backfill) already evaluated with the same rule and
    fingerprint are skipped and cost nothing. Exit 6 when no sampled trace could be
    evaluated (none sampled, or every evaluation failed).
    """
    import asyncio

    from groundtrace.analyzer.errors import NothingMeasuredError

    monitor = _monitor(rules, state, write_back)

    async def main() -> dict[str, Any]:
        with monitor:
            return await monitor.backfill([str(p) for p in paths])

    final = asyncio.run(main())
    if as_json:
        typer.echo(json.dumps(final))
    else:
        _summary(final)
    done = sum(
        n for r in final["rules"].values() for k, n in r["counts"].items()
        if k.startswith("evaluated_") or k == "already_evaluated"
    )  # fmt: skip
    if not done:
        raise NothingMeasuredError(
            "no sampled trace was evaluated (none sampled or selected, or every evaluation "
            f"failed): see {state / 'status.json'}"
        )


@monitor_app.command("status")
@handle_errors
def status_command(state: StateOpt) -> None:
    """Print the status a running (or stopped) monitor keeps in --state."""
    from groundtrace.analyzer.errors import InputError

    path = state / "status.json"
    if not path.is_file():
        raise InputError("no status.json: the monitor has not run here", path=str(path))
    _summary(json.loads(path.read_text("utf-8")))


def _summary(status: dict[str, Any]) -> None:
    for name, rule in status["rules"].items():
        w = rule["window"]
        rate = "-" if w["rate"] is None else f"{w['rate']:.3f} {w['interval']}"
        incident = "none" if rule["incident"] is None else f"open (#{rule['incident']['number']})"
        _say(f"rule {name}: {rule['counts']}; window {w['failed']}/{w['n']} failed, rate {rate};"
             f" incident {incident}; alerts {rule['alerts']}")  # fmt: skip
        for version, v in rule["versions"].items():
            _say(f"  version {version}: {v['failed']}/{v['n']} failed {v['interval']}")
    err_console.print(f"ingest: {status['ingest']}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``monitor`` to ``app``."""
    app.add_typer(monitor_app, name="monitor")
