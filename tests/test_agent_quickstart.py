"""The agent quick start of docs/agents.md, run as written: each file the page says to save
(``Save as `NAME`:`` before a code block) in an empty folder, then each line of its shell
block, in a fresh interpreter each.

The page's agent (a vet clinic's booking desk, a domain the repository holds nowhere else)
plants one tool fault of each kind in its second version; the page says what the path check
calls each one and what the gate decides. This test holds the page to both: every planted
fault is found by ``groundtrace paths`` with no false alarm on the first version, while the
text channel passes every answer, and the gate does not promote the path-only regression.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
BIN = Path(sys.executable).parent
_SAVED = re.compile(r"Save as `([^`]+)`:\n\n```\w+\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_EXITS = re.compile(r"#\s*exits (\d+)")

#: What the page says the path check calls each planted fault of version 2.
PLANTED = {
    "vet-1": "fabricated_quote",
    "vet-2": "tool_error",
    "vet-3": "invalid_quote",
    "vet-4": "missing_command",
    "vet-5": "param_error",
    "vet-6": "timeout",
}


def _page() -> str:
    return DOC.read_text("utf-8")


def _commands() -> list[str]:
    (shell,) = [body for lang, body in _BLOCK.findall(_page()) if lang == "bash"]
    return [line for line in shell.strip().splitlines() if line.strip()]


def _run(line: str, cwd: Path) -> None:
    argv = shlex.split(line, comments=True)
    expected = int(m.group(1)) if (m := _EXITS.search(line)) else 0
    program = {"python": sys.executable, "groundtrace": str(BIN / "groundtrace")}[argv[0]]
    done = subprocess.run(
        [program, *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == expected, f"{line}\n{done.stdout}\n{done.stderr}"


def _statuses(report: Path) -> dict[str, str]:
    return {c["id"]: c["status"] for c in json.loads(report.read_text("utf-8"))["cases"]}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page's files saved and its commands run, in an empty folder."""
    root = tmp_path_factory.mktemp("agent-quickstart")
    saved = _SAVED.findall(_page())
    assert [name for name, _ in saved] == ["clinic.py", "cases.jsonl", "tools.toml", "gate.toml"]
    for name, body in saved:
        (root / name).write_text(body, "utf-8")
    for line in _commands():
        _run(line, root)
    return root


@pytest.mark.timeout(600)
def test_the_page_defines_what_it_uses_and_documents_every_tools_config_field() -> None:
    page = _page()
    for shown in ("paths=(", "paths_hook=", "call_id", '"cited_ids"', '"quotes"', "--tools-config",
                  "groundtrace paths", "groundtrace gate run", "[paths]"):  # fmt: skip
        assert shown in page, shown
    assert "`tools.<tool name>`" in page and "`tools.<tool name>.reads`" in page


@pytest.mark.timeout(600)
def test_every_planted_fault_is_found_and_the_first_version_passes(ran: Path) -> None:
    assert set(_statuses(ran / "paths-v1" / "report.json").values()) == {"pass"}
    v2 = json.loads((ran / "paths-v2" / "report.json").read_text("utf-8"))
    assert {c["id"]: c["status"] for c in v2["cases"]} == PLANTED
    assert all(c["text_correct"] for c in v2["cases"])  # every answer reads as right
    assert sorted(v2["metrics"]["masked_failures"]) == sorted(PLANTED)


@pytest.mark.timeout(600)
def test_the_gate_does_not_promote_a_path_only_regression(ran: Path) -> None:
    report = json.loads((ran / "gate" / "report.json").read_text("utf-8"))
    assert report["decision"] == "block" and report["exit_code"] == 20
    decisions = {c["case_id"]: c["decision"] for c in report["cases"]}
    assert decisions == {**dict.fromkeys(PLANTED, "manual_review"), "vet-5": "block"}
    for case in report["cases"]:
        failed = [r for r in case["results"] if r["status"] == "fail"]
        assert [(r["layer"], r["name"]) for r in failed] == [("paths", "command_path")]
        assert failed[0]["detail"].startswith(f"path status {PLANTED[case['case_id']]}")
    assert [c["case_id"] for c in report["changes"]["new"]] == list(PLANTED)
    config = json.loads((ran / "gate-config" / "report.json").read_text("utf-8"))
    assert config["cases"] == report["cases"]
