"""Real gunicorn ``--preload`` workers export every span they record, each to its own file:
while they serve (the export thread runs in each worker) and when they stop (the last spans
are flushed at the worker's exit). groundtrace is configured in the arbiter, before the fork."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="gunicorn needs os.fork"),
]
pytest.importorskip("gunicorn")

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0


def _get(port: int, path: str) -> dict[str, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Connection": "close"})
        response = conn.getresponse()
        assert response.status == 200
        result: dict[str, int] = json.loads(response.read())
        return result
    finally:
        conn.close()


def _spans_per_file(folder: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in sorted(folder.glob("*.jsonl")):
        total = 0
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                total += sum(
                    len(ss["spans"])
                    for rs in json.loads(line)["resourceSpans"]
                    for ss in rs["scopeSpans"]
                )
        counts[path.name] = total
    return counts


def _serve(port: int, requests: int, served: Counter[int], ended: dict[int, int]) -> None:
    with ThreadPoolExecutor(4) as pool:  # concurrent clients, so both workers serve
        for reply in pool.map(lambda _: _get(port, "/ask"), range(requests)):
            served[reply["pid"]] += 1
            ended[reply["pid"]] = max(ended.get(reply["pid"], 0), reply["ended"])


@pytest.mark.timeout(180)
def test_preload_workers_export_every_span_they_record(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.set_inheritable(True)
    port = listener.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    env.update(
        GROUNDTRACE_EXPORTER="file",
        GROUNDTRACE_FILE_PATH=f"{traces}/",
        OTEL_BSP_SCHEDULE_DELAY="200",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--preload", "--workers", "2",
         "--bind", f"fd://{listener.fileno()}", "--graceful-timeout", "20",
         "--log-level", "warning", "tests.integration.prefork_app:app"],
        cwd=ROOT, env=env, pass_fds=(listener.fileno(),), start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    listener.close()  # the server holds its own copy
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                _get(port, "/ping")
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                assert server.poll() is None, "gunicorn exited"
                time.sleep(0.1)

        served: Counter[int] = Counter()
        ended: dict[int, int] = {}
        _serve(port, 40, served, ended)
        assert server.pid not in served  # the workers served, not the arbiter
        # while the workers live, their export threads write every span to their own file
        expected = {f"traces-{pid}.jsonl": 2 * n for pid, n in served.items()}
        deadline = time.monotonic() + WAIT_S
        while _spans_per_file(traces) != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _spans_per_file(traces) == expected
        assert server.poll() is None

        _serve(port, 40, served, ended)  # then stop at once: the exit flush writes the rest
        os.kill(server.pid, signal.SIGTERM)
        output, _ = server.communicate(timeout=WAIT_S)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.communicate()
    assert server.returncode == 0, output
    exported = _spans_per_file(traces)
    assert exported == {f"traces-{pid}.jsonl": 2 * n for pid, n in served.items()}, output
    # each worker's own counts: the spans it ended (no parent's counts carried over)
    assert all(ended[pid] == 2 * served[pid] for pid in served), (ended, served)
    assert sum(served.values()) == 80
    assert "lost" not in output
