"""Every analysis command runs, shows and exits through one helper (``cli._analyze.drive``):
no command strings the driver, the estimate, the unwrapping and the exit code by hand."""

from __future__ import annotations

import re
from pathlib import Path

import groundtrace.analyzer.cli as cli

CLI = Path(cli.__file__).parent


def test_only_drive_runs_an_analysis_and_decides_the_exit() -> None:
    by_hand = re.compile(r"\b(run_analysis|finish|run_analysis_async)\(")
    found = {
        path.name: by_hand.findall(path.read_text(encoding="utf-8"))
        for path in sorted(CLI.glob("*.py"))
        if path.name != "_analyze.py"
    }
    assert {name: calls for name, calls in found.items() if calls} == {}
    commands = ("_attribution.py", "_audit.py", "_gate.py", "_interventions.py", "_judge.py",
                "_paths.py")  # fmt: skip
    for name in commands:
        assert "drive(" in (CLI / name).read_text(encoding="utf-8"), name
