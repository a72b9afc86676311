"""Seconds of a new user's path: install, own traces, then every analysis by the command line.

The user is the greenhouse handbook app of ``tests.support.new_domain`` (BM25 via rank_bm25,
its own OpenAI-compatible extractive model server on 127.0.0.1, the SDK as the quick start
shows), the same as ``tests/integration/test_new_user.py``. Phases, each timed on its own:

* ``install``: ``python -m venv`` + ``pip install '.[analyzer]'`` into a scratch folder, only
  with ``--install`` (it needs the package index); otherwise skipped, since the virtualenv
  this runs in exists (reported as ``null`` with the reason);
* ``own_traces``: the app run twice as a script (release 1 and the release 2 with the planted
  regression), 7 questions each, traces written as OTLP-JSON lines;
* ``traces_summary``, ``gate_run``, ``interventions`` (``--endpoint``, every operator),
  ``judge_run`` (lexical), ``paths`` (not applicable: exit 6 expected) and ``audit_run``
  (``--sources --questions --answers``): each one ``groundtrace`` process as the user types it,
  start-up included.

Each command's exit code is checked against the one its result gives (gate 20: block; paths
6: nothing measured), so a figure is never the time of a failed run. ``--rounds N`` repeats
the analyses N times (fresh output folders) and reports each phase's median. Run from the
repository root::

    python -m benchmarks.new_user [--rounds 3] [--install]

It prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.new_domain.handbook import write_audit_corpus, write_cases
from tests.support.new_domain.model_server import MODEL, reader_server

ROOT = Path(__file__).resolve().parents[1]
GROUNDTRACE = str(Path(sys.executable).parent / "groundtrace")


def _timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _run(argv: list[str], expect: int = 0) -> None:
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != expect:
        raise SystemExit(
            f"{' '.join(argv[:3])}... exited {done.returncode}, expected {expect}:\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )


def _install(scratch: Path) -> float:
    venv = scratch / "venv"

    def install() -> None:
        _run([sys.executable, "-m", "venv", str(venv)])
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{ROOT}[analyzer]"])

    return _timed(install)


def _analyses(scratch: Path, url: str, v1: Path, v2: Path, cases: Path) -> dict[str, float]:
    out = Path(tempfile.mkdtemp(dir=scratch))
    audit = write_audit_corpus(out / "corpus")
    gt = GROUNDTRACE
    steps: dict[str, tuple[list[str], int]] = {
        "traces_summary": ([gt, "traces", "summary", str(v1)], 0),
        "gate_run": ([gt, "gate", "run", "--baseline", str(v1), "--candidate", str(v2),
                      "--cases", str(cases), "--out", str(out / "gate")], 20),
        "interventions": ([gt, "interventions", str(v1), "--cases", str(cases), "--endpoint",
                           url, "--model", MODEL, "--out", str(out / "iv")], 0),
        "judge_run": ([gt, "judge", "run", str(v1), "--judge", "lexical",
                       "--out", str(out / "judge")], 0),
        "paths": ([gt, "paths", str(v1), "--cases", str(cases), "--out", str(out / "paths")], 6),
        "audit_run": ([gt, "audit", "run", "--sources", str(audit.sources), "--questions",
                       str(audit.questions), "--answers", str(audit.answers),
                       "--out", str(out / "audit")], 0),
    }  # fmt: skip
    seconds: dict[str, float] = {}
    for name, (command, code) in steps.items():
        start = time.perf_counter()
        _run(command, code)
        seconds[name] = time.perf_counter() - start
    return seconds


def main(argv: list[str] | None = None) -> None:
    """Time every phase and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the analyses")
    parser.add_argument("--install", action="store_true", help="time a fresh install too")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="new-user-"))
    report: dict[str, object] = {"rounds": args.rounds}
    try:
        if args.install:
            report["install_seconds"] = _install(scratch)
        else:
            report["install_seconds"] = None
            report["install"] = f"skipped: a virtualenv exists ({sys.prefix})"
        with reader_server() as server:
            v1, v2 = scratch / "v1", scratch / "v2"
            app = [sys.executable, "-m", "tests.support.new_domain.app"]

            def own_traces() -> None:
                for folder, version in ((v1, "1"), (v2, "2")):
                    _run([*app, str(folder), "--model-url", server.base_url, "--version", version])

            report["own_traces_seconds"] = _timed(own_traces)
            cases = write_cases(scratch / "cases.jsonl")
            rounds = [
                _analyses(scratch, server.base_url, v1 / "traces", v2 / "traces", cases)
                for _ in range(args.rounds)
            ]
        phases = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
        report["analysis_seconds"] = phases
        report["analyses_total_seconds"] = sum(phases.values())
        report["model_calls"] = server.request_count
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
