"""The built wheel in fresh environments: the light base install, and the demo as a user runs it.

Builds the wheel of a clean copy of this checkout (no stale ``build/`` folder can add files to
it, and the checkout stays as it was) and installs it into new virtual environments in a
temporary directory (pinned by constraints.txt, from the package index pip is configured with):

* alone: the SDK configures and records, and the collectors' file readers read the traces
  back, with none of the analyzer's dependencies installed;
* with the extra the lexical demo needs: ``groundtrace demo`` runs from an empty directory, so
  neither the checkout nor its ``examples/`` folder can be on the import path.
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("wheel")
    source = build / "source"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
    wheels = build / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
        cwd=build,
        timeout=600,
    )
    (built,) = wheels.glob("groundtrace-*.whl")
    return built


def _install(requirement: str, venv: Path) -> Path:
    """A new venv at ``venv`` with ``requirement`` installed; returns its ``bin`` folder."""
    _run([sys.executable, "-m", "venv", str(venv)], cwd=venv.parent, timeout=120)
    _run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
         "-c", str(REPO / "constraints.txt"), requirement],
        cwd=venv.parent,
        timeout=600,
    )  # fmt: skip
    return venv / "bin"


#: Run by the base install's Python: record one request to files, read it back.
_BASE_SCRIPT = """
import importlib.util, sys, tempfile
import groundtrace.sdk as gt
gt.configure(exporter="none")
gt.shutdown()
out = tempfile.mkdtemp()
gt.configure(service_name="base", exporter="file", file_path=out, capture_content=True)

@gt.retrieve(retriever="bm25", k=1)
def search(question):
    return [{"id": "d1", "content": "Paris is the capital of France.", "score": 1.0}]

@gt.answer
def respond(question, evidence):
    return {"answer": "Paris", "confidence": 0.9, "cited_ids": ["d1"]}

@gt.request(app_version="1.0")
def handle(question, case_id=None):
    return respond(question, search(question))["answer"]

handle("What is the capital of France?", case_id="c1")
gt.shutdown()
from groundtrace.collectors import ReadReport, read_traces
report = ReadReport()
(trace,) = read_traces([out], report=report)
assert not report.errors and trace.answer == "Paris", (report.errors, trace.answer)
assert [e.id for e in trace.evidence] == ["d1"]
heavy = ("numpy", "scipy", "typer", "rich", "matplotlib", "yaml", "h11", "openai", "httpx")
print(sorted(name for name in heavy if importlib.util.find_spec(name) is not None))
"""


def test_the_base_install_records_and_reads_traces_without_the_analyzer_stack(
    wheel: Path, tmp_path: Path
) -> None:
    bin_dir = _install(str(wheel), tmp_path / "venv")
    out = _run([str(bin_dir / "python"), "-c", _BASE_SCRIPT], cwd=tmp_path, timeout=120)
    assert out.strip() == "[]"  # none of the analyzer's dependencies is installed


def test_the_installed_wheel_runs_the_demo_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    bin_dir = _install(f"{wheel}[plots]", venv)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(
        [str(bin_dir / "python"), "-c", "import groundtrace.examples as e; print(e.__file__)"],
        cwd=elsewhere,
        timeout=60,
    )
    assert Path(where.strip()).is_relative_to(venv)

    out = _run(
        [str(bin_dir / "groundtrace"), "demo", "--model", "lexical", "--questions", "3",
         "--out", "demo", "--json"],
        cwd=elsewhere,
        timeout=300,
    )  # fmt: skip
    summary = json.loads(out)
    assert summary["questions"] == 3 and summary["traces"] == 3
    files = sorted((elsewhere / "demo" / "traces").glob("*.jsonl"))
    assert files and any(f.stat().st_size > 0 for f in files)
    assert (elsewhere / "demo" / "cases.jsonl").read_text(encoding="utf-8").count("\n") == 3
