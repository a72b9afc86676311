"""``groundtrace monitor run`` as a process: a real receiver, a streaming app, SIGKILL, alerts.

The app is the bicycle workshop's agent (``tests.support.bike_shop``) exporting over OTLP/HTTP
to the monitor's embedded receiver on loopback, at a steady rate, from its own process. The
rules run the ``paths`` analysis on the workshop's case file. A webhook is a loopback HTTP
server in this test.

Stated before the runs: with ``window = 20`` and ``baseline = 40``, a candidate version that
fails half its requests (the steady version fails one in ten) opens one incident within 20 of
its evaluated traces; the control run (the steady version only) opens none.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.monitor import Outcome
from groundtrace.analyzer.monitor._rules import sampled
from groundtrace.collectors import ReadReport, read_traces
from tests.support.bike_shop import write_cases

pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class _Hook(http.server.BaseHTTPRequestHandler):
    bodies: list[dict[str, object]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).bodies.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, object]]]]:
    bodies: list[dict[str, object]] = []
    handler = type("Hook", (_Hook,), {"bodies": bodies})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", bodies
    finally:
        server.shutdown()
        thread.join(10)


def _rules(folder: Path, *, sample: float, webhook: str | None) -> Path:
    hook = "" if webhook is None else f'webhook = "{webhook}"'
    path = folder / "rules.toml"
    path.write_text(
        f"""
[monitor]
complete_after = 0.3
batch_size = 10
window = 20
baseline = 40
{hook}

[[rule]]
name = "path"
analysis = "paths"
sample = {sample}
[rule.config]
cases = "{folder / "cases.jsonl"}"
""",
        encoding="utf-8",
    )
    return path


class _Monitor:
    """``groundtrace monitor run --port`` in its own process (its output in a file)."""

    def __init__(self, folder: Path, rules: Path, port: int) -> None:
        self.folder = folder
        self.args = [*CLI, "monitor", "run", "--rules", str(rules), "--state",
                     str(folder / "state"), "--traces", str(folder / "traces"),
                     "--port", str(port), "--poll", "0.1"]  # fmt: skip
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0

    def start(self) -> None:
        self.runs += 1
        log = (self.folder / f"monitor-{self.runs}.log").open("wb")
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if _listening(self.port):
                return
            assert self.proc.poll() is None, self.log()
            time.sleep(0.1)
        raise AssertionError(f"the monitor did not listen within 120 s: {self.log()}")

    def log(self) -> str:
        return (self.folder / f"monitor-{self.runs}.log").read_text("utf-8", "replace")

    def stop(self, signum: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        self.proc.send_signal(signum)
        code = self.proc.wait(60)
        self.proc = None
        return code

    def kill_if_running(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


def _app(port: int, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.bike_shop", "--endpoint",
         f"http://127.0.0.1:{port}", *args],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _journal(state: Path) -> list[Outcome]:
    journal = UnitJournal(state / "journal.sqlite", lock=False)
    try:
        return list(journal.completed(Outcome))
    finally:
        journal.close()


def _wait_for(check: object, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.25)
    raise AssertionError(f"not reached within {seconds} s")


def test_sigkill_mid_stream_then_restart_evaluates_every_sampled_trace_exactly_once(
    tmp_path: Path,
) -> None:
    write_cases(tmp_path / "cases.jsonl", 400)
    port = _free_port()
    monitor = _Monitor(tmp_path, _rules(tmp_path, sample=0.5, webhook=None), port)
    try:
        monitor.start()
        app = _app(port, "--count", "240", "--rate", "40", "--broken-every", "4")
        _wait_for(lambda: len(_journal(tmp_path / "state")) >= 20)
        assert monitor.stop(signal.SIGKILL) == -signal.SIGKILL  # mid-stream
        _wait_for(lambda: not _listening(port), 60)  # its receiver stops with it
        monitor.start()  # the app's exporter retries what was refused meanwhile
        assert app.wait(300) == 0

        stored = list(read_traces([tmp_path / "traces"], report=ReadReport()))
        complete = [t for t in stored if t.steps and not t.incomplete]
        wanted = {t.trace_id for t in complete if sampled(t.trace_id, 0.5)}
        _wait_for(lambda: {o.trace_id for o in _journal(tmp_path / "state")} >= wanted)
        assert monitor.stop() == 0
    finally:
        monitor.kill_if_running()
    outcomes = _journal(tmp_path / "state")
    assert {o.trace_id for o in outcomes} == wanted  # none missed, none extra
    seqs = sorted(o.seq for o in outcomes)
    assert seqs == list(range(1, len(outcomes) + 1))  # each evaluated once, in one order
    assert len(complete) >= 200  # most of the 240 arrived (the rest were refused while down)
    for o in outcomes:
        i = int((o.case_id or "").removeprefix("bk-"))
        assert o.outcome == ("fail" if i % 4 == 0 else "pass"), o


def _stream(port: int, phases: list[tuple[str, int, int]]) -> None:
    start = 0
    for version, count, broken_every in phases:
        app = _app(port, "--version", version, "--start", str(start), "--count", str(count),
                   "--rate", "60", "--broken-every", str(broken_every))  # fmt: skip
        assert app.wait(300) == 0
        start += count


@pytest.mark.parametrize("planted", [True, False], ids=["regression", "control"])
def test_a_planted_regression_alerts_once_naming_its_version_and_recovers(
    tmp_path: Path, webhook: tuple[str, list[dict[str, object]]], planted: bool
) -> None:
    url, bodies = webhook
    write_cases(tmp_path / "cases.jsonl", 400)
    port = _free_port()
    monitor = _Monitor(tmp_path, _rules(tmp_path, sample=1.0, webhook=url), port)
    phases = [("v1", 100, 10), ("v2", 40, 2), ("v1", 100, 10)] if planted else [("v1", 240, 10)]
    try:
        monitor.start()
        _stream(port, phases)
        _wait_for(lambda: len(_journal(tmp_path / "state")) >= 235)
        assert monitor.stop() == 0
    finally:
        monitor.kill_if_running()
    if not planted:
        assert bodies == []
        return
    assert [b["state"] for b in bodies] == ["incident", "recovered"], bodies
    incident = bodies[0]
    assert next(iter(incident["versions"])) == "v2"  # type: ignore[call-overload]
    assert "v2" in str(incident["text"]) and "INCIDENT 1" in str(incident["text"])
    order = sorted(_journal(tmp_path / "state"), key=lambda o: o.seq)
    first_v2 = next(o.seq for o in order if o.version == "v2")
    assert 0 < int(incident["position"]) - first_v2 + 1 <= 20  # type: ignore[call-overload]
    recovered = int(bodies[1]["position"])  # type: ignore[call-overload]
    last_v2 = max(o.seq for o in order if o.version == "v2")
    assert recovered > last_v2  # only after the rollback
    status = json.loads((tmp_path / "state" / "status.json").read_text("utf-8"))
    assert status["rules"]["path"]["incident"] is None
    assert status["alerts"] == {"sent": 2, "delivered": 2, "undelivered": 0}
    assert os.path.getsize(tmp_path / "state" / "alerts.jsonl") > 0
