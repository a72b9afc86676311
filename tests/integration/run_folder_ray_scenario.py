"""An intervention run on a private Ray instance whose driver is SIGKILLed mid-run, resumed.

Run inside a private network namespace (some Ray services bind every interface)::

    unshare -n sh -c 'ip link set lo up && python -m tests.integration.run_folder_ray_scenario'

The first run holds units in flight on the workers (``tests.integration.run_folder_app``) and
its driver is SIGKILLed; the second runs into the same folder. It prints one JSON line: exit
codes, units, and the trace ids in the counterfactual traces against those the rows name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.integration.test_run_folder_lock import ROOT, _interventions, _span_trace_ids
from tests.support.data import HOTPOT

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def _measure(work: Path) -> dict[str, Any]:
    from groundtrace.analyzer.demo import DemoConfig, run_demo

    demo = work / "demo"
    run_demo(DemoConfig(model="lexical", questions=3, out=demo, dataset=HOTPOT))
    out = work / "run"
    command = [*_interventions(demo, out), "--executor", "ray", "--ray-workers", "2"]
    env = {**os.environ, **RAY_ENV, "PYTHONUNBUFFERED": "1"}
    held = {**env, "GT_TEST_HOLD": str(work), "GT_TEST_HOLD_AFTER": "5"}
    first = subprocess.Popen(command, cwd=ROOT, env=held, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 600
    while not list(work.glob("held-*")) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.1)
    held_units = len(list(work.glob("held-*")))
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    resumed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=900, check=False)  # fmt: skip
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {
        "held": held_units, "killed_exit_code": first.returncode,
        "resume_exit_code": resumed.returncode, "resume_stderr": resumed.stderr[-2000:],
        "units": len(rows), "named": sorted(r["counterfactual"]["trace_id"] for r in rows),
        "in_files": sorted(_span_trace_ids(out / "counterfactual_traces")),
    }  # fmt: skip


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="gtrunray", dir="/tmp"))
    try:
        out = {"ok": True, **_measure(work)}
    except Exception as exc:  # reported to the test, which prints it
        out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
