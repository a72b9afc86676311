"""Real ``groundtrace`` processes into one run folder: one runs, the other is refused at once;
a SIGKILLed run's folder is taken over and leaves one counterfactual trace per unit.

The interventions replay the shipped example's traces (lexical reader, no model) through
``tests.integration.run_folder_app:answer``, which holds a unit in flight on request; the
audit answers through a local OpenAI-compatible server that holds its replies until released.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from groundtrace.analyzer._results import read
from groundtrace.analyzer.interventions import InterventionSummary
from groundtrace.collectors import ReadReport, read_traces
from tests.analyzer.audit.test_audit_models import _cli, _reply
from tests.support.data import HOTPOT
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "tests.integration.run_folder_app:answer"
CLI = [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    out = tmp_path_factory.mktemp("demo")
    run_demo(DemoConfig(model="lexical", questions=3, out=out, dataset=HOTPOT))
    return out


def _interventions(demo: Path, out: Path) -> list[str]:
    return [*CLI, "interventions", str(demo / "traces"), "--cases", str(demo / "cases.jsonl"),
            "--replay", ENTRY, "--out", str(out), "--concurrency", "2"]  # fmt: skip


def _env(tmp_path: Path, hold_after: int | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "GT_TEST_CALLS": str(tmp_path / "calls.log")}
    env.pop("GT_TEST_HOLD", None)
    if hold_after is not None:
        env |= {"GT_TEST_HOLD": str(tmp_path), "GT_TEST_HOLD_AFTER": str(hold_after)}
    return env


def _start(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.communicate(timeout=60)


def _wait_until_held(tmp_path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(f"held-{proc.pid}")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    assert list(tmp_path.glob(f"held-{proc.pid}")), "the run never reached a held unit"


def _calls_by(tmp_path: Path, pid: int) -> int:
    lines = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.split(" ", 1)[0] == str(pid))


def _span_trace_ids(folder: Path) -> set[str]:
    """Every trace id of every span in the OTLP-JSON lines files of ``folder``."""
    found: set[str] = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for resource in json.loads(line)["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    found.update(span["traceId"] for span in scope["spans"])
    return found


def _busy(stderr: str, pid: int) -> bool:
    text = " ".join(stderr.split())
    return f"is in use by another run (pid {pid} on {socket.gethostname()}, started" in text


def test_a_second_interventions_run_into_a_folder_in_use_is_refused_at_once(
    demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = _start(_interventions(demo, out), _env(tmp_path, hold_after=3))
    try:
        _wait_until_held(tmp_path, first)
        second = subprocess.run(
            _interventions(demo, out), cwd=ROOT, env=_env(tmp_path), capture_output=True,
            text=True, timeout=120, check=False,
        )  # fmt: skip
        assert second.returncode == 2, second.stderr
        assert _busy(second.stderr, first.pid) and "interventions" in second.stderr
        assert first.poll() is None  # refused while the first still runs: it did not wait
        (tmp_path / "release").touch()
        _, stderr = first.communicate(timeout=120)
    finally:
        _stop(first)
    assert first.returncode == 0, stderr
    calls = read(out / "summary.json", InterventionSummary).calls
    assert calls.run_now == calls.units_total > 10
    # every unit ran once, all by the first run; one counterfactual trace each
    assert _calls_by(tmp_path, first.pid) == calls.units_total
    assert len((tmp_path / "calls.log").read_text().splitlines()) == calls.units_total
    assert len(_span_trace_ids(out / "counterfactual_traces")) == calls.units_total


def test_a_killed_run_is_taken_over_and_leaves_one_counterfactual_trace_per_unit(
    demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    killed = _start(_interventions(demo, out), _env(tmp_path, hold_after=5))
    try:
        _wait_until_held(tmp_path, killed)  # units in flight, their ANSWER spans written
        os.kill(killed.pid, signal.SIGKILL)
        killed.communicate(timeout=60)
    finally:
        _stop(killed)
    assert killed.returncode == -signal.SIGKILL
    resumed = subprocess.run(_interventions(demo, out), cwd=ROOT, env=_env(tmp_path),
                             capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    stderr = " ".join(resumed.stderr.split())
    assert f"taking over the run folder {out} from a run that stopped" in stderr
    assert f"(pid {killed.pid} on {socket.gethostname()}" in stderr
    calls = read(out / "summary.json", InterventionSummary).calls
    assert calls.from_journal > 0 and calls.from_journal + calls.run_now == calls.units_total
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == calls.units_total and all(r["status"] == "ok" for r in rows)
    # exactly one counterfactual trace per unit: the one its row names, whole
    named = {r["counterfactual"]["trace_id"] for r in rows}
    assert len(named) == calls.units_total
    assert _span_trace_ids(out / "counterfactual_traces") == named
    report = ReadReport()
    traces = list(read_traces([out / "counterfactual_traces"], report=report))
    assert not report.errors and sorted(t.trace_id for t in traces) == sorted(named)
    assert all(t.replay is not None for t in traces)


def test_a_second_audit_run_into_a_folder_in_use_is_refused_at_once(tmp_path: Path) -> None:
    out = tmp_path / "run"
    release = threading.Event()

    def held(req: ServerRequest) -> Reply:
        release.wait(timeout=120)
        return _reply(req)

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with OpenAICompatServer(handler=held) as srv:
        first = _start(_cli(out, srv.base_url), env)
        try:
            deadline = time.monotonic() + 120
            while srv.request_count < 2 and time.monotonic() < deadline:
                assert first.poll() is None, first.communicate()[1]
                time.sleep(0.05)
            assert srv.request_count >= 2
            second = subprocess.run(_cli(out, srv.base_url), env=env, capture_output=True,
                                    text=True, timeout=90, check=False)  # fmt: skip
            assert second.returncode == 2, second.stderr
            assert _busy(second.stderr, first.pid) and "audit run" in second.stderr
            assert first.poll() is None
            release.set()
            _, stderr = first.communicate(timeout=120)
        finally:
            release.set()
            _stop(first)
        bodies = [json.dumps(r.body, sort_keys=True) for r in srv.requests]
    assert first.returncode == 0, stderr
    assert len(bodies) == len(set(bodies)) > 2  # every call made once
    assert (out / "run.json").exists()
