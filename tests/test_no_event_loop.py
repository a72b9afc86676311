"""The library starts no event loop of its own: it runs inside notebooks and async services.

Only these places may start one (``asyncio.run``, ``new_event_loop``, ``run_until_complete``):
the driver's synchronous entry (``run_analysis``; ``run_analysis_async`` is the way in from a
running loop), the ``monitor`` command's entry, and the embedded OTLP receiver, whose server
loop runs in a thread (or process) of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sdk", "collectors", "analyzer")
ALLOWED = {
    "analyzer/_driver.py": 1,
    "analyzer/cli/_monitor.py": 2,
    "collectors/receiver/_receiver.py": 2,
}
STARTERS = {"run", "new_event_loop", "run_until_complete"}


def _loop_starts(path: Path) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        on_asyncio = isinstance(func.value, ast.Name) and func.value.id == "asyncio"
        if (on_asyncio and func.attr in STARTERS) or func.attr == "run_until_complete":
            count += 1
    return count


def test_only_the_entry_points_start_an_event_loop() -> None:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            starts = _loop_starts(path)
            if starts:
                found[path.relative_to(ROOT).as_posix()] = starts
    assert found == ALLOWED


def test_the_check_sees_a_loop_started_in_a_worker_thread(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import asyncio\n\ndef f(limiter):\n    asyncio.run(limiter.acquire())\n",
        encoding="utf-8",
    )
    assert _loop_starts(module) == 1
