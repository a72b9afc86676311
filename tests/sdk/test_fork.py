"""Fork safety: forked children (prefork workers, ``multiprocessing``) never hang on a lock held
at the fork, export their own spans while they live and when they exit, and report their own
counts. Each scenario runs in a fresh interpreter (``tests/sdk/fork_scenarios.py``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

ROOT = Path(__file__).resolve().parents[2]
#: What the four children writing one file end with: 300 spans each, none lost or repeated.
EVERY_SPAN_ONCE = {
    "codes": [0, 0, 0, 0],
    "spans": 1200,
    "distinct": 1200,
    "per_child": [300, 300, 300, 300],
}


def run_scenario(
    name: str, out: Path, timeout: float = 120, **env: str
) -> tuple[dict[str, Any], str]:
    """Run one scenario; its JSON result and its stderr. The whole process group is killed by
    id if it outlives ``timeout``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDTRACE_", "OTEL_"))}
    environ.update(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.sdk.fork_scenarios", name, str(out)],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"scenario {name} did not finish in {timeout} s: {stderr[-2000:]}")
    assert proc.returncode == 0, stderr[-4000:]
    return json.loads(stdout.strip().splitlines()[-1]), stderr


@pytest.mark.timeout(300)
def test_no_hang_in_50_forks_under_three_busy_threads(tmp_path: Path) -> None:
    result, stderr = run_scenario("hang", tmp_path, timeout=240)
    # every child recorded a span, exported it (its own count: 1) and exited within 20 s
    assert result == {"forks": 50, "hung": 0, "codes": [0] * 50}, stderr[-2000:]


def test_live_child_exports_while_it_runs(tmp_path: Path) -> None:
    result, stderr = run_scenario("live", tmp_path, OTEL_BSP_SCHEDULE_DELAY="100")
    assert result == {
        "exported_while_alive": 200,
        "alive": True,
        "code": 0,
        "child_names_only": True,  # the parent's queued spans are not exported twice
        "parent": 3,
    }, stderr[-2000:]


def test_sys_exit_child_spans_arrive(tmp_path: Path) -> None:
    result, stderr = run_scenario("sys_exit", tmp_path)
    assert result["code"] == 0
    assert sorted(result["child"]) == [f"child-{i}" for i in range(7)], stderr[-2000:]
    assert result["parent"] == 5
    assert "lost" not in stderr


def test_loss_warning_of_a_child_counts_the_childs_spans(tmp_path: Path) -> None:
    result, stderr = run_scenario("warning", tmp_path)
    assert result == {"code": 0, "parent_failed": 5}
    warnings = [line for line in stderr.splitlines() if "lost" in line]
    assert len(warnings) == 2, stderr[-2000:]  # the child's at its exit, the parent's at its
    child, parent = warnings
    assert "lost 3 span(s) of 3 ended: 0 dropped" in child and "3 failed" in child
    assert "lost 5 span(s) of 5 ended: 0 dropped" in parent and "5 failed" in parent


def test_multiprocessing_fork_children_flush_at_their_end(tmp_path: Path) -> None:
    result, stderr = run_scenario("mp", tmp_path)
    assert result == {
        "process_code": 0,
        "process_spans": 9,
        "pool_recorded": 40,
        "pool_exported": 40,
        "pool_workers": True,
    }, stderr[-2000:]


def test_processes_appending_to_one_file_write_whole_lines(tmp_path: Path) -> None:
    result, stderr = run_scenario("shared_file", tmp_path, OTEL_BSP_MAX_EXPORT_BATCH_SIZE="25")
    # every line parsed (spans_in raises on a torn or interleaved line); batches of <= 25
    assert result.pop("lines") >= 48
    assert result.pop("files") == 1
    assert result == EVERY_SPAN_ONCE, stderr[-2000:]


def test_processes_rotating_one_file_lose_and_repeat_nothing(tmp_path: Path) -> None:
    result, stderr = run_scenario(
        "shared_file",
        tmp_path,
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE="25",
        GROUNDTRACE_FILE_MAX_BYTES="400000",
        GROUNDTRACE_FILE_BACKUP_COUNT="100",
    )
    assert result.pop("lines") >= 48
    assert result.pop("files") >= 5  # about 2.6 MB written in files of 400 kB
    assert result == EVERY_SPAN_ONCE, stderr[-2000:]


def test_children_never_share_the_parents_otlp_connection(tmp_path: Path) -> None:
    # the parent's exporter holds a keep-alive connection when the four children export at once
    result, stderr = run_scenario("otlp_http", tmp_path)
    assert result == {
        "codes": [0, 0, 0, 0],  # each child exported its own 10 spans, none failed
        "received": 5 + 4 * 10 + 5,
        "corrupt": 0,
        "parent_exported": 10,
    }, stderr[-2000:]
