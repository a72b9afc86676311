"""Instructions per span of each reading stage, counted by valgrind (noise-free).

Wall and CPU times move by up to 2x on a shared machine; the number of instructions a
stage executes does not. This script writes one OTLP-JSON file of real SDK spans (the
``ingest.py`` workload), then runs each stage once in a child process under
``valgrind --tool=callgrind`` and subtracts a child that only imports and reads the
file's bytes. Prints ONE JSON object: instructions per span of

* ``floor_json_loads``: ``json.loads`` of every line (the floor of ``ingest.py``);
* ``typed_decode``: the C decoder of the reader's fast path alone (no Python objects
  built from its result);
* ``read_spans``: reading the file into span records;
* ``tau``: reading and building τ (``read_traces``);

and ``build_stage`` (``tau`` - ``read_spans``) and ``tau_vs_floor`` (the ratio the
``ingest.py`` target bounds by 3). Instructions are not time -- cache misses and the
allocator are not weighed -- so use these to compare two versions of the code, and the
timing benchmarks for the targets.

Needs ``valgrind`` on PATH; each stage takes 10-60 s under it.

Usage::

    python benchmarks/instructions.py [--traces 1000] [--content off|on]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import make_spans, write_file

#: Child program: read the file's bytes, then run one stage over them.
CHILD = """
import json, sys
from pathlib import Path
from groundtrace.collectors.readers import read_spans, read_traces
from groundtrace.collectors.readers._otlp_structs import _DECODER
stage, path = sys.argv[1], Path(sys.argv[2])
lines = path.read_bytes().splitlines()
if stage == "floor_json_loads":
    for line in lines:
        json.loads(line)
elif stage == "typed_decode":
    for line in lines:
        _DECODER.decode(line)
elif stage == "read_spans":
    for _ in read_spans([path]):
        pass
elif stage == "tau":
    for _ in read_traces([path]):
        pass
"""
STAGES = ("floor_json_loads", "typed_decode", "read_spans", "tau")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(stage: str, path: Path) -> int:
    """Instructions the child executes for ``stage`` (``"base"``: imports and read only)."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            CHILD,
            stage,
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--content", choices=("off", "on"), default="off")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this benchmark counts instructions with it")
    with tempfile.TemporaryDirectory(prefix="gt-bench-instr-") as tmp:
        path = Path(tmp) / "spans.jsonl"
        spans = make_spans(args.traces, capture_content=args.content == "on")
        write_file(spans, path)
        base = instructions("base", path)
        per_span = {
            stage: round((instructions(stage, path) - base) / len(spans)) for stage in STAGES
        }
        report: dict[str, Any] = {
            "python": sys.version.split()[0],
            "spans": len(spans),
            "bytes_per_span": round(path.stat().st_size / len(spans)),
            "content": args.content,
            "instructions_per_span": per_span,
            "build_stage": per_span["tau"] - per_span["read_spans"],
            "tau_vs_floor": round(per_span["tau"] / per_span["floor_json_loads"], 2),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
