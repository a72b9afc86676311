"""CLI start-up benchmark: CPU time of ``groundtrace --help`` and of a one-line summary.

Prints ONE JSON object with the CPU time (user + system of the child process, from
``resource.getrusage(RUSAGE_CHILDREN)`` deltas) of three commands, each run once per round in
interleaved rounds (the order rotates from round to round) after one discarded warm-up round:

* ``sdk``: ``python -c "import groundtrace.sdk as gt; gt.configure(exporter='none')"``, the
  reference -- what an instrumented application pays to start groundtrace;
* ``help``: ``groundtrace --help``;
* ``traces_summary``: ``groundtrace traces summary FILE`` on a one-line OTLP-JSON file written
  by the SDK's file exporter (one trace, one span);
* ``paths_help``, ``judge_help``, ``gate_help``, ``interventions_help``, ``audit_help`` and
  ``attribution_help``: ``groundtrace paths --help``, ``judge run --help``, ``gate run --help``,
  ``interventions --help``, ``audit run --help`` and ``attribution --help``, commands whose
  options are generated from their analysis's config record (reported, not held to the
  target); a command the installed version does not have is named in ``left_out``.

``cpu_s`` holds each command's median over the rounds; ``ratios`` each command's median
divided by the reference's median, measured in the same run. Target: the ratios of ``help``
and ``traces_summary`` <= 3 (the root's help loads no command).

Usage::

    python benchmarks/cli_startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import groundtrace.sdk as gt

TARGET = 3.0
#: The commands held to the target ratio.
HELD = ("help", "traces_summary")
#: The record-backed commands' help: name -> the arguments after ``groundtrace``.
RECORD_HELP = {
    "paths_help": ("paths", "--help"),
    "judge_help": ("judge", "run", "--help"),
    "gate_help": ("gate", "run", "--help"),
    "interventions_help": ("interventions", "--help"),
    "audit_help": ("audit", "run", "--help"),
    "attribution_help": ("attribution", "--help"),
}
SDK_START = "import groundtrace.sdk as gt; gt.configure(exporter='none')"


def write_one_line_file(folder: Path) -> Path:
    """One trace of one span, exported by the SDK's file exporter: a file of one line."""
    path = folder / "one.jsonl"
    gt.configure(service_name="cli-startup", exporter="file", file_path=path)

    @gt.request(app_version="1")
    def handle(question: str) -> str:
        return "answer"

    handle("question?")
    gt.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) != 1:
        raise SystemExit(f"expected a one-line trace file, got {len(lines)} lines in {path}")
    return path


def groundtrace_command() -> list[str]:
    """The ``groundtrace`` console script beside this interpreter, else the same via ``-c``."""
    script = shutil.which("groundtrace", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script]
    return [sys.executable, "-c", "from groundtrace.analyzer.cli import main; main()"]


def child_cpu_seconds(command: list[str], env: dict[str, str]) -> float:
    """Run ``command`` to completion; its user + system CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, env=env, check=False, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="measured rounds (>= 1)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    env = {**os.environ, "COLUMNS": "100"}
    with tempfile.TemporaryDirectory() as folder:
        trace_file = write_one_line_file(Path(folder))
        groundtrace = groundtrace_command()
        commands = {
            "sdk": [sys.executable, "-c", SDK_START],
            "help": [*groundtrace, "--help"],
            "traces_summary": [*groundtrace, "traces", "summary", str(trace_file)],
        }
        left_out = []
        for name, words in RECORD_HELP.items():
            command = [*groundtrace, *words]
            probe = subprocess.run(command, capture_output=True, env=env, check=False, timeout=300)
            if probe.returncode != 0 and b"No such command" in probe.stderr:
                left_out.append(name)  # an older version without the command
            else:
                commands[name] = command
        names = list(commands)
        samples: dict[str, list[float]] = {name: [] for name in names}
        for round_no in range(args.rounds + 1):
            shift = round_no % len(names)
            for name in names[shift:] + names[:shift]:
                cpu = child_cpu_seconds(commands[name], env)
                if round_no > 0:  # round 0 warms the page cache and the bytecode caches
                    samples[name].append(cpu)
    cpu_s = {name: statistics.median(values) for name, values in samples.items()}
    ratios = {name: cpu_s[name] / cpu_s["sdk"] for name in names if name != "sdk"}
    report = {
        "rounds": args.rounds,
        "commands": {name: shlex.join(command) for name, command in commands.items()},
        "cpu_s": {name: round(value, 4) for name, value in cpu_s.items()},
        "cpu_s_min": {name: round(min(values), 4) for name, values in samples.items()},
        "ratios": {name: round(value, 3) for name, value in ratios.items()},
        "target_ratio": TARGET,
        "within_target": all(ratios[name] <= TARGET for name in HELD),
        "left_out": left_out,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
