"""The file exporter on a failing disk: warned while the app runs, files re-opened, lines whole.

The full-disk and read-only cases run for real on a small tmpfs mounted in a private mount
namespace (``unshare``); they are skipped, with the reason, where no namespace can be made.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundtrace.collectors.readers import ReadReport, read_spans
from groundtrace.sdk import _runtime, _write_failures
from groundtrace.sdk._config import configure, export_stats, shutdown
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

pytestmark = pytest.mark.usefixtures("clean_config")


def _spans(traces: int, per_trace: int, size: int = 40) -> list[ReadableSpan]:
    """``traces`` traces of ``per_trace`` spans each, every span with a ``size``-char text."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "disk"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    for t in range(traces):
        with tracer.start_as_current_span(f"conversation-{t}"):
            for s in range(per_trace - 1):
                with tracer.start_as_current_span(f"step-{s}") as span:
                    span.set_attribute("text", f"{t}-{s}-" + "x" * size)
    return list(memory.get_finished_spans())


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _count(lines: list[dict[str, Any]]) -> int:
    return sum(len(spans) for spans in _span_lists(lines))


def _span_lists(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [
        ss["spans"] for line in lines for rs in line["resourceSpans"] for ss in rs["scopeSpans"]
    ]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("groundtrace")
    ]


# -- warned while the app runs ---------------------------------------------------------------


def test_a_failing_write_is_warned_while_the_app_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")  # one export per force_flush
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    caplog.set_level(logging.WARNING, logger="groundtrace")
    provider = configure(exporter="file", file_path=blocker / "sub" / "t.jsonl", service_name="s")
    tracer = _runtime.get_tracer()
    for round_ in range(3):
        for i in range(20):
            with tracer.start_as_current_span(f"r{round_}-s{i}"):
                pass
        assert provider.force_flush()
    running = _warnings(caplog)  # before shutdown: what a long-running server sees
    assert len(running) == 1  # once for the kind, then rate-limited
    assert "ENOTDIR" in running[0] and str(blocker / "sub" / "t.jsonl") in running[0]
    assert "20 span(s) lost" in running[0]
    shutdown()
    assert export_stats().failed == 60
    # the counts withheld by the rate limit are reported at shutdown
    assert any("2 more failed write(s), 40 span(s) lost" in m for m in _warnings(caplog))


def test_warnings_are_once_per_kind_then_at_most_one_per_interval_with_counts(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="groundtrace")
    clock = [100.0]
    monkeypatch.setattr(_write_failures.time, "monotonic", lambda: clock[0])
    failures = _write_failures.WriteFailures(interval=60.0)
    full = OSError(28, "No space left on device")
    for _ in range(5):
        failures.failed("t.jsonl", full, 10)
    failures.failed("t.jsonl", IsADirectoryError(21, "Is a directory"), 3)
    assert len(_warnings(caplog)) == 2  # the first ENOSPC and the first EISDIR
    clock[0] += 59.0
    failures.failed("t.jsonl", full, 10)
    assert len(_warnings(caplog)) == 2  # still within the interval
    clock[0] += 1.0
    failures.failed("t.jsonl", full, 10)
    last = _warnings(caplog)[-1]
    assert "ENOSPC" in last and "6 more failed write(s), 60 span(s) lost in the last 60 s" in last
    failures.flush("t.jsonl")
    assert len(_warnings(caplog)) == 3  # nothing unreported is left: no more warnings


# -- moved, deleted or replaced --------------------------------------------------------------


def test_the_directory_deleted_mid_run_is_created_again(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    provider = configure(exporter="file", file_path=str(folder) + "/", service_name="s")
    tracer = _runtime.get_tracer()
    for i in range(200):
        with tracer.start_as_current_span(f"before-{i}"):
            pass
    assert provider.force_flush()
    shutil.rmtree(folder)  # default settings: no rotation
    for i in range(200):
        with tracer.start_as_current_span(f"after-{i}"):
            pass
    shutdown()
    (path,) = folder.iterdir()
    assert _count(_lines(path)) == 200  # the spans after the deletion, in a new file
    assert export_stats().exported == 400 and export_stats().failed == 0


def test_a_moved_file_is_created_again_at_its_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    exporter = OTLPJsonFileExporter(path)
    assert exporter.export(_spans(1, 3)) is SpanExportResult.SUCCESS
    path.rename(tmp_path / "moved.jsonl")
    assert exporter.export(_spans(1, 4)) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert _count(_lines(tmp_path / "moved.jsonl")) == 3
    assert _count(_lines(path)) == 4


def test_with_rotation_a_deleted_directory_is_created_again_too(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    exporter = OTLPJsonFileExporter(folder / "t.jsonl", max_bytes=1_000_000, backup_count=2)
    assert exporter.export(_spans(1, 3)) is SpanExportResult.SUCCESS
    shutil.rmtree(folder)
    assert exporter.export(_spans(1, 4)) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert _count(_lines(folder / "t.jsonl")) == 4


def test_a_file_replaced_by_a_directory_counts_the_spans_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t.jsonl"
    caplog.set_level(logging.WARNING, logger="groundtrace")
    provider = configure(exporter="file", file_path=path, service_name="s")
    tracer = _runtime.get_tracer()
    for i in range(200):
        with tracer.start_as_current_span(f"before-{i}"):
            pass
    assert provider.force_flush()
    path.unlink()
    path.mkdir()
    for i in range(200):
        with tracer.start_as_current_span(f"after-{i}"):
            pass
    assert provider.force_flush()
    assert any("EISDIR" in m for m in _warnings(caplog))
    shutdown()
    stats = export_stats()
    assert (stats.exported, stats.failed) == (200, 200)  # never counted exported and lost


# -- one damaged line costs one trace --------------------------------------------------------


def test_a_batch_is_one_line_per_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    exporter = OTLPJsonFileExporter(path)
    assert exporter.export(_spans(12, 6)) is SpanExportResult.SUCCESS
    exporter.shutdown()
    lines = _lines(path)
    assert len(lines) == 12 and _count(lines) == 72
    for line in lines:
        ids = {span["traceId"] for spans in _span_lists([line]) for span in spans}
        assert len(ids) == 1


def _traces_read_whole(path: Path, expected: dict[str, int]) -> int:
    """How many of the ``expected`` traces (id -> span count) are read back complete."""
    counts: dict[str, int] = {}
    for span in read_spans([path], report=ReadReport()):
        counts[span.trace_id] = counts.get(span.trace_id, 0) + 1
    return sum(1 for trace_id, n in expected.items() if counts.get(trace_id) == n)


def test_one_damaged_byte_costs_at_most_one_trace(tmp_path: Path) -> None:
    """12 conversations in one batch (a short run with default batching); a byte damaged at
    each of 24 places: every time, the other 11 conversations are read back complete."""
    spans = _spans(12, 6)
    expected: dict[str, int] = {}
    for span in spans:
        key = format(span.context.trace_id, "032x")  # type: ignore[union-attr]
        expected[key] = expected.get(key, 0) + 1
    clean = tmp_path / "clean.jsonl"
    exporter = OTLPJsonFileExporter(clean)
    exporter.export(spans)
    exporter.shutdown()
    data = clean.read_bytes()
    assert _traces_read_whole(clean, expected) == 12
    damaged = tmp_path / "damaged.jsonl"
    for k in range(24):
        at = (k * 2 + 1) * len(data) // 48
        if data[at : at + 1] == b"\n":
            at += 1
        damaged.write_bytes(data[:at] + b"\x00" + data[at + 1 :])  # no JSON holds a raw NUL
        assert _traces_read_whole(damaged, expected) >= 11, at


# -- a full disk, a read-only volume (real, on a tmpfs in a private mount namespace) ---------

_DISK_SCRIPT = textwrap.dedent(
    """
    import json, logging, os, subprocess, sys
    from pathlib import Path
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from groundtrace.sdk.file_exporter import OTLPJsonFileExporter

    disk, readonly = Path(sys.argv[1]), Path(sys.argv[2])
    for options, mountpoint in (("size=64k", disk), ("ro,size=64k", readonly)):
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", mountpoint], check=True)
    warnings = []

    class Keep(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())

    logging.getLogger("groundtrace").addHandler(Keep(logging.WARNING))

    def batch(n, size):
        memory = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({}))
        provider.add_span_processor(SimpleSpanProcessor(memory))
        with provider.get_tracer("t").start_as_current_span("root"):
            for i in range(n):
                with provider.get_tracer("t").start_as_current_span("s") as span:
                    span.set_attribute("text", str(i) + "x" * size)
        return list(memory.get_finished_spans())

    out = {}
    exporter = OTLPJsonFileExporter(disk / "t.jsonl")
    out["first"] = exporter.export(batch(3, 100)).name
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "filler", "wb") as filler:  # leave 8 KiB free
        filler.write(b"f" * (free - 8192))
    out["full"] = exporter.export(batch(60, 1000)).name  # ~70 KB: a fragment gets in
    out["warned_while_full"] = list(warnings)
    os.unlink(disk / "filler")
    out["freed"] = exporter.export(batch(20, 1000)).name
    exporter.shutdown()
    out["file"] = (disk / "t.jsonl").read_bytes().decode("utf-8", "replace")
    readonly_exporter = OTLPJsonFileExporter(readonly / "t.jsonl")
    out["readonly"] = readonly_exporter.export(batch(2, 10)).name
    out["warned_readonly"] = warnings[len(out["warned_while_full"]):]
    print(json.dumps(out))
    """
)


def _in_private_mount_namespace(tmp_path: Path) -> dict[str, Any]:
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        pytest.skip("needs Linux and unshare(1) to mount a private tmpfs")
    (tmp_path / "disk").mkdir()
    (tmp_path / "readonly").mkdir()
    script = tmp_path / "disk_script.py"
    script.write_text(_DISK_SCRIPT)
    errors = []
    for flags in (["-rm"], ["-m"]):  # unprivileged (a user namespace), then as root
        command = [unshare, *flags, sys.executable, str(script)]
        done = subprocess.run(
            [*command, str(tmp_path / "disk"), str(tmp_path / "readonly")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode == 0:
            return dict(json.loads(done.stdout))
        errors.append(f"unshare {flags[0]}: {done.stderr.strip().splitlines()[-1:]}")
        if "Traceback" in done.stderr and "mount" not in done.stderr:
            pytest.fail(done.stderr)
    pytest.skip("cannot make a private mount namespace with a tmpfs: " + "; ".join(errors))


def test_a_full_disk_then_freed_leaves_every_line_whole_or_a_torn_fragment(
    tmp_path: Path,
) -> None:
    out = _in_private_mount_namespace(tmp_path)
    assert (out["first"], out["full"], out["freed"]) == ("SUCCESS", "FAILURE", "SUCCESS")
    lines = out["file"].split("\n")
    assert lines[-1] == ""  # the file ends with a newline
    whole, torn = [], []
    for line in lines[:-1]:
        assert line.count('{"resourceSpans"') == 1  # never two batch starts on one line
        try:
            whole.append(json.loads(line))
        except ValueError:
            torn.append(line)
    assert len(torn) == 1 and len(torn[0]) >= 4096  # the fragment the full disk took
    assert _count(whole) == 4 + 21  # the batch before and the batch after, both whole
    assert any("ENOSPC" in m for m in out["warned_while_full"])  # while the app runs


def test_a_read_only_volume_is_warned_and_counted_failed(tmp_path: Path) -> None:
    out = _in_private_mount_namespace(tmp_path)
    assert out["readonly"] == "FAILURE"
    (message,) = out["warned_readonly"]
    assert "EROFS" in message and "3 span(s) lost" in message
