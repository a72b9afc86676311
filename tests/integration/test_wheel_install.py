"""The built wheel in a fresh environment: `groundtrace demo` runs as an ordinary install.

Builds the wheel of a clean copy of this checkout (no stale ``build/`` folder can add files to
it, and the checkout stays as it was), installs it with the extra the lexical demo needs into
a new virtual environment in a temporary directory (pinned by constraints.txt, from the package
index pip is configured with), and runs the demo from an empty directory there, so neither the
checkout nor its ``examples/`` folder can be on the import path.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

REPO = Path(__file__).resolve().parents[2]
#: What a build of the checkout must not see: environments, caches, earlier build output.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.so", ".*_cache", "runs"
)


def _run(command: list[str], *, cwd: Path, timeout: float) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{shlex.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}\n"
        f"{done.stderr[-3000:]}"
    )
    return done.stdout


def test_the_installed_wheel_runs_the_demo_from_any_directory(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
    wheels = tmp_path / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
        cwd=tmp_path,
        timeout=600,
    )
    (wheel,) = wheels.glob("groundtrace-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, timeout=120)
    python = venv / "bin" / "python"
    _run(
        [str(python), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt"),
         f"{wheel}[plots]"],
        cwd=tmp_path,
        timeout=600,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(
        [str(python), "-c", "import groundtrace.examples as e; print(e.__file__)"],
        cwd=elsewhere,
        timeout=60,
    )
    assert Path(where.strip()).is_relative_to(venv)

    out = _run(
        [str(venv / "bin" / "groundtrace"), "demo", "--model", "lexical", "--questions", "3",
         "--out", "demo", "--json"],
        cwd=elsewhere,
        timeout=300,
    )  # fmt: skip
    summary = json.loads(out)
    assert summary["questions"] == 3 and summary["traces"] == 3
    files = sorted((elsewhere / "demo" / "traces").glob("*.jsonl"))
    assert files and any(f.stat().st_size > 0 for f in files)
    assert (elsewhere / "demo" / "cases.jsonl").read_text(encoding="utf-8").count("\n") == 3
