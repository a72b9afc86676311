"""Production volumes on one machine: peak memory of ``traces convert`` and ``paths``, flat.

Generates OTLP-JSON lines files of about ``--sizes`` spans each (cached in ``--cache-dir``),
then runs ``groundtrace traces convert`` and ``groundtrace paths`` on each in a subprocess
and reports their peak RSS (``os.wait4`` of that one child), wall and CPU time and spans per
second. Prints ONE JSON object; the claim it shows is ``ratios``: the peak RSS of the
largest input over that of the smallest, close to 1 (memory independent of input size).
A one-copy input (64 spans) runs beside them as the floor (interpreter + imports).

The spans are the SDK's own: the document agent (``groundtrace.examples.agent_docs``, SDK
decorators + the OTLP-JSON file exporter) answers its 16 tasks once; that export (one
line, 64 spans, about 1.9 KB per span) is the template. Copy ``k`` of it is the same line
with the first 8 hex digits of every trace, span and parent id replaced by ``k`` (so every
copy is a distinct set of traces with the same structure). The first ``--eval-copies``
copies keep their case ids -- the evaluation slice ``paths`` validates against the
agent's case file; the others are production traffic whose case id is in no case file
(``paths`` reads, normalises and joins them, and lists them as unmatched).

Usage::

    python benchmarks/volume.py [--sizes 100000 1000000] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.sdk import semconv as sc

_ID = re.compile(rb'"(traceId|spanId|parentSpanId)":"[0-9a-f]{8}')
_CASE = b'{"key":"' + sc.GT_REQUEST_CASE_ID.encode() + b'","value":{"stringValue":"'
_CLI = "from groundtrace.analyzer.cli import main; main()"
_FORMAT = 2  # bump when the generated files change


def _template(work: Path) -> bytes:
    """One export of the document agent through the SDK's file exporter (its lines: one per
    trace)."""
    code = f"from groundtrace.examples.agent_docs.app import run; run({str(work)!r})"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    lines = b"".join(p.read_bytes() for p in sorted((work / "traces").iterdir())).splitlines()
    if not lines:
        raise SystemExit("the document agent exported nothing")
    line = b"\n".join(lines)
    ids = set(re.findall(rb'"(traceId|spanId)":"([0-9a-f]+)"', line))
    suffixes = {(kind, hex_id[8:]) for kind, hex_id in ids}  # what a copy keeps of each id
    if len(suffixes) != len(ids) or _CASE not in line:
        raise SystemExit("template ids are not unique past their prefix, or no case id")
    return line


def generate(cache: Path, spans: int, eval_copies: int) -> dict[str, Any]:
    """The input of about ``spans`` spans, generated once and then read from ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    name = f"volume-v{_FORMAT}-{spans}-eval{eval_copies}"
    meta_path = cache / f"{name}.json"
    if meta_path.exists():
        meta: dict[str, Any] = json.loads(meta_path.read_text())
        if Path(meta["path"]).exists():
            return {**meta, "cached": True}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        template = _template(Path(work))
    sdk_seconds = time.perf_counter() - started
    per_copy = template.count(b'"spanId"')
    traces_per_copy = len(set(re.findall(rb'"traceId":"([0-9a-f]+)"', template)))
    copies = max(1, math.ceil(spans / per_copy))
    need = copies * (len(template) + 1)
    free = shutil.disk_usage(cache).free
    if need * 2 > free:  # the input plus the τ output of convert
        raise SystemExit(f"needs about {2 * need >> 20} MiB free in {cache}, has {free >> 20}")
    production = template.replace(_CASE, _CASE + b"prod-")
    path = cache / f"{name}.jsonl"
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    with partial.open("wb", buffering=8 << 20) as out:
        for k in range(copies):
            line = template if k < eval_copies else production
            out.write(_ID.sub(rb'"\1":"' + b"%08x" % k, line))
            out.write(b"\n")
    os.replace(partial, path)
    seconds = time.perf_counter() - started
    meta = {
        "path": str(path),
        "spans": copies * per_copy,
        "traces": copies * traces_per_copy,
        "bytes": path.stat().st_size,
        "spans_per_copy": per_copy,
        "eval_traces": min(copies, eval_copies) * traces_per_copy,
        "sdk_template_seconds": round(sdk_seconds, 3),
        "write_seconds": round(seconds, 3),
        "write_spans_per_s": round(copies * per_copy / seconds),
        "write_mb_per_s": round(path.stat().st_size / seconds / 1e6, 1),
    }
    meta_path.write_text(json.dumps(meta))
    return {**meta, "cached": False}


def measure(args: list[str], spans: int, out: Path) -> dict[str, Any]:
    """Run ``groundtrace ARGS`` in a child; its peak RSS, times and spans per second."""
    with (out / "stdout").open("w+b") as stdout, (out / "stderr").open("w+b") as stderr:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", _CLI, *args], stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)  # the figures of this one child
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"groundtrace {' '.join(args)} failed:\n{stderr.read()[-2000:]!r}")
        output = stdout.read()
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "spans_per_s": round(spans / wall),
        "spans_per_cpu_s": round(spans / cpu),
        "stdout": output,
    }


def run_size(meta: dict[str, Any], out: Path) -> dict[str, Any]:
    """``traces convert`` and ``paths`` on one input; checks what they produced."""
    tau = out / "tau.jsonl"
    convert = measure(["traces", "convert", meta["path"], "--out", str(tau)], meta["spans"], out)
    with tau.open("rb") as handle:
        written = sum(1 for _ in handle)
    tau.unlink()
    if written != meta["traces"]:
        raise SystemExit(f"convert wrote {written} traces, expected {meta['traces']}")
    paths = measure(
        ["paths", meta["path"], "--cases", str(EXAMPLE_DIR / "cases.jsonl"),
         "--tools-config", str(EXAMPLE_DIR / "tools.toml"), "--out", str(out / "paths"),
         "--json"],
        meta["spans"],
        out,
    )  # fmt: skip
    verdicts = len(json.loads(paths.pop("stdout"))["cases"])
    convert.pop("stdout")
    report = json.loads((out / "paths" / "report.json").read_text())
    unmatched = report["unmatched_count"]
    if verdicts != meta["eval_traces"] or verdicts + unmatched != meta["traces"]:
        raise SystemExit(f"paths: {verdicts} verdicts + {unmatched} unmatched traces")
    shutil.rmtree(out / "paths")
    return {
        **{k: meta[k] for k in ("spans", "traces", "bytes", "cached")},
        "convert": convert,
        "paths": {**paths, "verdicts": verdicts, "unmatched_traces": unmatched},
    }


def main() -> None:
    """Generate, run and print the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "groundtrace-volume",
        help="where the generated inputs are kept between runs",
    )
    parser.add_argument("--eval-copies", type=int, default=1, help="copies with case ids")
    args = parser.parse_args()
    sizes = [1, *sorted(args.sizes)]  # 1: one copy, the floor
    results = []
    with tempfile.TemporaryDirectory(dir=args.cache_dir.parent) as out:
        for spans in sizes:
            meta = generate(args.cache_dir, spans, args.eval_copies)
            print(
                f"{meta['spans']} spans, {meta['bytes'] / 1e6:.1f} MB: {meta['path']}",
                file=sys.stderr,
            )
            results.append({**run_size(meta, Path(out)), "generated": meta})
    smallest, largest = results[1], results[-1]
    ratios = {
        f"{cmd}_peak_rss_largest_vs_smallest": round(
            largest[cmd]["peak_rss_mb"] / smallest[cmd]["peak_rss_mb"], 3
        )
        for cmd in ("convert", "paths")
    }
    print(json.dumps({"sizes": results, "ratios": ratios}, indent=1))


if __name__ == "__main__":
    main()
