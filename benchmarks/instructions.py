"""Instructions per span of each reading stage, or per decorated call, counted by valgrind.

Wall and CPU times move by up to 2x on a shared machine; the number of instructions a
stage executes does not. This script writes one OTLP-JSON file of real SDK spans (the
``ingest.py`` workload), then runs each stage once in a child process under
``valgrind --tool=callgrind`` and subtracts a child that only imports and reads the
file's bytes. Prints ONE JSON object: instructions per span of

* ``floor_json_loads``: ``json.loads`` of every line (the floor of ``ingest.py``);
* ``typed_decode``: the msgspec decoder of the reader's fast path alone (no span records
  built from its result);
* ``read_spans``: reading the file into span records;
* ``tau``: reading and building τ (``read_traces``);

and ``build_stage`` (``tau`` - ``read_spans``) and ``tau_vs_floor`` (the ratio the
``ingest.py`` target bounds by 3). Instructions are not time -- cache misses and the
allocator are not weighed -- so use these to compare two versions of the code, and the
timing benchmarks for the targets. Memory routines (``memchr``, ``memcpy``) run
as valgrind's simple replacements, so stages that scan or copy long lines count more
instructions than their time would suggest.

With ``--sdk``, the same count for the decorators of ``sdk_overhead.py`` instead: for each
decorator, instructions per call of the groundtrace decorator and of the equivalent raw
OpenTelemetry span (``raw_span``: the same attributes, placed the same way), and their ratio
(``sdk_overhead.py``'s ``decorator_vs_raw_span`` is the same ratio in time). With
``--redaction on`` the decorators run with the built-in redactor, which finds nothing to mask
in this workload (their spans carry the raw span's attributes):
``decorator_vs_raw_span_redaction_on`` of ``sdk_overhead.py``.

Needs ``valgrind`` on PATH; each stage takes 10-60 s under it.

Usage::

    python benchmarks/instructions.py [--traces 1000] [--content off|on]
    python benchmarks/instructions.py --sdk [--calls 2000] [--decorators retrieve,rerank]
        [--redaction off|on]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# run as a script, this folder is first on sys.path: the sibling benchmarks import directly
from ingest import make_spans, write_file
from sdk_overhead import PAYLOADS

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

#: Child program for ``--sdk``: one variant of one decorator, called N times.
SDK_CHILD = """
import sys
import sdk_overhead as b
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import groundtrace.sdk as gt
name, variant, calls, redact = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "on"
memory, starts, capture = InMemorySpanExporter(), b.StartAttributes(), TracerProvider()
capture.add_span_processor(starts)
capture.add_span_processor(SimpleSpanProcessor(memory))
gt.configure(tracer_provider=capture, capture_content=True, redact=False)
span_name, at_start, later = b._emitted(name, memory, starts)
provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(b.NoOpExporter(), max_queue_size=1 << 16))
gt.configure(tracer_provider=provider, capture_content=True, redact=redact)
tracer = provider.get_tracer("bench")
payload, factory, args = b.PAYLOADS[name]
decorated = factory()(payload)
def raw():
    with tracer.start_as_current_span(span_name, attributes=at_start) as span:
        result = payload(*args)
        span.set_attributes(later)
        return result
call = raw if variant == "raw_span" else (lambda: decorated(*args))
for _ in range(20):  # warm-up: what the first calls build once (caches, compiled patterns)
    call()
for _ in range(calls):
    call()
provider.shutdown()
"""
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


#: Children hash strings with one fixed seed: with random seeds, dict probing alone moves a
#: count by a few percent from run to run.
_CHILD_ENV = {**os.environ, "PYTHONHASHSEED": "0"}
#: The ``--sdk`` child imports ``sdk_overhead`` from this folder, found on its PYTHONPATH.
_HERE = str(Path(__file__).resolve().parent)
_SDK_CHILD_ENV = {
    **_CHILD_ENV,
    "PYTHONPATH": os.pathsep.join(filter(None, (_HERE, os.environ.get("PYTHONPATH")))),
}


def instructions(program: str, *argv: str, env: dict[str, str] = _CHILD_ENV) -> int:
    """Instructions a child Python process (environment ``env``) executes running ``program``."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            program,
            *argv,
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def sdk_report(calls: int, decorators: list[str], redaction: str = "off") -> dict[str, Any]:
    """Instructions per call of each decorator and its raw span, and their ratios; the
    decorators run with the built-in redactor on or off (``redaction``: "on" / "off")."""

    def count(name: str, variant: str, n: int) -> int:
        return instructions(SDK_CHILD, name, variant, str(n), redaction, env=_SDK_CHILD_ENV)

    per_call = {  # each variant less the same child after its warm-up only
        f"{variant}.{name}": round((count(name, variant, calls) - count(name, variant, 0)) / calls)
        for name in decorators
        for variant in ("raw_span", "groundtrace")
    }
    ratios = {
        name: round(per_call[f"groundtrace.{name}"] / per_call[f"raw_span.{name}"], 3)
        for name in decorators
    }
    return {
        "python": sys.version.split()[0],
        "calls": calls,
        "redaction": redaction,
        "instructions_per_call": per_call,
        "decorator_vs_raw_span_by_decorator": ratios,
        "worst": max(ratios, key=ratios.__getitem__),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--content", choices=("off", "on"), default="off")
    parser.add_argument("--sdk", action="store_true", help="count the SDK decorators instead")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--decorators", default=",".join(PAYLOADS))
    parser.add_argument(
        "--redaction",
        choices=("off", "on"),
        default="off",
        help="--sdk: the decorators with the built-in redactor on or off (the raw span: same)",
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this benchmark counts instructions with it")
    if args.sdk:
        print(json.dumps(sdk_report(args.calls, args.decorators.split(","), args.redaction)))
        return
    with tempfile.TemporaryDirectory(prefix="gt-bench-instr-") as tmp:
        path = Path(tmp) / "spans.jsonl"
        spans = make_spans(args.traces, capture_content=args.content == "on")
        write_file(spans, path)
        base = instructions(CHILD, "base", str(path))
        per_span = {
            stage: round((instructions(CHILD, stage, str(path)) - base) / len(spans))
            for stage in STAGES
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
