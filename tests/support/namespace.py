"""Running a scenario in a private network namespace, where only a loopback exists.

Servers that bind every interface (Phoenix's gRPC receiver, some Ray services) are started
by a scenario script inside ``unshare -n sh -c 'ip link set lo up && ...'``; the script prints
one JSON line with what it measured, which the test asserts on.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = ["require_ray", "run_in_private_network", "run_ray_scenario"]

REPO = Path(__file__).resolve().parents[2]


def require_ray() -> None:
    """Fail (not skip) when Ray is missing: ``make test`` installs it with the ``dev`` extra."""
    if importlib.util.find_spec("ray") is None:
        pytest.fail(
            "ray is not installed: pip install -c constraints.txt -e '.[dev]' (or '.[ray]')"
        )


def run_in_private_network(command: Sequence[str], *, timeout: float) -> dict[str, Any]:
    """Run ``command`` from the repository root in a new network namespace; its last JSON line.

    Fails the test (with the output's tail) when the command fails or prints no JSON line.
    """
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("unshare and ip (util-linux, iproute2) are needed for the private namespace")
    inner = f"ip link set lo up && {shlex.join(command)}"
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", inner],
        capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False,
    )  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, (
        f"scenario failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def run_ray_scenario(module: str, *, timeout: float) -> dict[str, Any]:
    """``python -m module`` (a Ray scenario) in a private network namespace: its JSON line.

    Fails the test when Ray is missing or the line does not say ``ok`` (with what it says).
    """
    require_ray()
    out = run_in_private_network([sys.executable, "-m", module], timeout=timeout)
    assert out["ok"], json.dumps(out, indent=1)[:6000]
    return out
