"""A stopped audit repeats no model call: SIGTERM drains the calls in flight and keeps them.

Against a real local OpenAI-compatible server that counts every request it receives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import AuditResult
from groundtrace.analyzer.executor import UnitJournal
from tests.analyzer.audit.test_audit_models import _cli, _reply
from tests.support.openai_server import OpenAICompatServer


def test_a_terminated_audit_resumes_with_zero_repeated_calls(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with OpenAICompatServer(handler=_reply) as srv:
        proc = subprocess.Popen(_cli(out, srv.base_url), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while srv.request_count < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        at_stop = srv.request_count
        assert proc.returncode == 130, stderr
        assert "stopped after" in stderr and not (out / "run.json").exists()
        journal = UnitJournal(out / "units.sqlite")
        kept = len(journal)
        journal.close()
        done = subprocess.run(
            _cli(out, srv.base_url), env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        bodies = [json.dumps(r.body, sort_keys=True) for r in srv.requests]
    assert at_stop >= 12 and kept >= 12 and len(bodies) > at_stop
    assert len(bodies) == len(set(bodies))  # not one call was made twice
    run = read(out / "run.json", AuditResult)
    assert run.summary.n_answers > 0
