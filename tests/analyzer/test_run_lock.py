"""The run-folder lock: one run at a time per folder, a killed holder's lock taken over, and
a resumed run's counterfactual traces pruned to the journaled units."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer._runlock import LOCK_NAME, RunFolderLock, read_holder
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import RunFolderBusyError
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.replay._prune import keep_traces


def test_a_held_folder_is_refused_naming_its_holder(tmp_path: Path) -> None:
    with RunFolderLock.acquire(tmp_path / "run") as held:
        assert held.took_over is None
        with pytest.raises(RunFolderBusyError) as refused:
            RunFolderLock.acquire(tmp_path / "run")
        message = str(refused.value)
        assert f"pid {os.getpid()} on {socket.gethostname()}" in message
        assert "started 20" in message and "command: " in message
        assert refused.value.exit_code == 2
    # released cleanly: the next holder takes it without a takeover, the file is emptied
    assert read_holder(tmp_path / "run") is None
    with RunFolderLock.acquire(tmp_path / "run") as again:
        assert again.took_over is None


def test_the_lock_of_a_killed_holder_is_taken_over_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "run"
    code = textwrap.dedent(f"""
        import os, signal
        from groundtrace.analyzer._runlock import RunFolderLock
        RunFolderLock.acquire({str(folder)!r})
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    killed = subprocess.run([sys.executable, "-c", code], timeout=120, check=False)
    assert killed.returncode == -signal.SIGKILL
    left = read_holder(folder)
    assert left is not None and left.pid != os.getpid()
    with caplog.at_level(logging.WARNING, "groundtrace.analyzer"):
        with RunFolderLock.acquire(folder) as taken:
            assert taken.took_over == left
            assert read_holder(folder) is not None and read_holder(folder) != left
    assert f"taking over the run folder {folder}" in caplog.text
    assert f"pid {left.pid} on {left.host}" in caplog.text


@pytest.mark.parametrize("name", ["journal.sqlite", "units.sqlite"])
def test_opening_a_journal_locks_its_run_folder(tmp_path: Path, name: str) -> None:
    first = UnitJournal(tmp_path / name)
    try:
        with pytest.raises(RunFolderBusyError):
            UnitJournal(tmp_path / name)
        reader = UnitJournal(tmp_path / name, lock=False)  # reading (an estimate) is not a run
        reader.close()
        assert (tmp_path / LOCK_NAME).exists()
    finally:
        first.close()
    UnitJournal(tmp_path / name).close()  # closed: free again


def _dummy_inputs(tmp_path: Path) -> dict[str, list[str]]:
    missing = str(tmp_path / "missing")
    return {
        "gate run": ["gate", "run", "--baseline", missing, "--candidate", missing,
                     "--cases", missing],
        "paths": ["paths", missing, "--cases", missing],
        "judge validate": ["judge", "validate", "--gold", missing],
        "judge run": ["judge", "run", "--cases", missing],
    }  # fmt: skip


@pytest.mark.parametrize("command", ["gate run", "paths", "judge validate", "judge run"])
def test_commands_writing_a_report_folder_refuse_one_in_use(tmp_path: Path, command: str) -> None:
    out = tmp_path / "out"
    args = [*_dummy_inputs(tmp_path)[command], "--out", str(out)]
    with RunFolderLock.acquire(out):
        result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 2, result.output
    assert f"{out} is in use by another run (pid {os.getpid()}" in " ".join(result.output.split())
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # nothing written


def _line(*trace_ids: str) -> bytes:
    spans = [{"traceId": t, "spanId": f"{i:016x}", "name": "s"} for i, t in enumerate(trace_ids)]
    record = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    return json.dumps(record).encode() + b"\n"


def test_traces_of_units_not_journaled_are_pruned(tmp_path: Path) -> None:
    a, b, c = "a" * 32, "b" * 32, "c" * 32
    first = tmp_path / "traces-1.jsonl"
    first.write_bytes(_line(a) + _line(b) + b"not json\n" + _line(a, c) + b'{"resourceSp')
    second = tmp_path / "traces-2.jsonl"
    second.write_bytes(_line(a))
    (tmp_path / ".traces-3.jsonl.prune").write_bytes(_line(a))  # left by a killed pruning
    before = second.stat().st_mtime_ns
    assert keep_traces(tmp_path, {a}) == 2
    lines = first.read_bytes().splitlines()
    # b's line gone, c's span gone from the mixed line, the torn last line gone; an unreadable
    # line is left for the reader to report
    assert lines == [_line(a).strip(), b"not json", lines[2]]
    assert [s["traceId"] for s in json.loads(lines[2])["resourceSpans"][0]["scopeSpans"][0]
            ["spans"]] == [a]  # fmt: skip
    assert second.stat().st_mtime_ns == before  # nothing to drop: not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.name, second.name]
    assert keep_traces(tmp_path, {a}) == 0
