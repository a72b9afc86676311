"""A replay entry point for the run-folder tests: the example app's answer, held on request.

Each call appends a line to ``$GT_TEST_CALLS`` (when set). With ``$GT_TEST_HOLD`` set to a
folder, every call after the first ``$GT_TEST_HOLD_AFTER`` answers (its ANSWER span already
written) touches ``<folder>/held-<pid>`` and waits, for at most two minutes, for
``<folder>/release``: a unit in flight that a test can kill or let go. With
``$GT_TEST_ORPHAN`` set to a folder, the first call writes there a span of a trace no unit
names (as a worker of a killed run, outliving its driver, would).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from groundtrace.examples.hotpot_rag.app import answer as example_answer

__all__ = ["answer"]

#: The trace id of the span ``$GT_TEST_ORPHAN`` has written.
ORPHAN_TRACE = "0f" * 16
_calls = itertools.count()
_log = threading.Lock()


def answer(question: str, evidence: Sequence[Mapping[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """The example's answer; held after the first answers when the environment says so."""
    result = example_answer(question, evidence, **kwargs)
    if calls := os.environ.get("GT_TEST_CALLS"):
        ids = ",".join(str(e.get("id")) for e in evidence)
        with _log, open(calls, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {question!r} {ids}\n")
    orphan = os.environ.get("GT_TEST_ORPHAN")
    if orphan and not Path(orphan, "orphan.jsonl").exists():
        span = {"traceId": ORPHAN_TRACE, "spanId": "00000000000000aa", "name": "REQUEST",
                "startTimeUnixNano": "1", "endTimeUnixNano": "2"}  # fmt: skip
        line = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
        Path(orphan, "orphan.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    hold = os.environ.get("GT_TEST_HOLD")
    if hold and next(_calls) >= int(os.environ.get("GT_TEST_HOLD_AFTER", "0")):
        Path(hold, f"held-{os.getpid()}").touch()
        deadline = time.monotonic() + 120
        while not Path(hold, "release").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return result
