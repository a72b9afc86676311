"""A SIGKILLed driver of an intervention run on Ray: the resumed run keeps one counterfactual
trace per unit (units finished or in flight on the workers are not left twice).

The scenario (``tests.integration.run_folder_ray_scenario``) runs in a private network
namespace and prints one JSON line, asserted on here.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.namespace import require_ray, run_in_private_network

# a private Ray instance starts twice: a minute or more on a busy 2-core machine
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


def test_a_killed_ray_driver_resumes_with_one_counterfactual_trace_per_unit() -> None:
    require_ray()
    command = [sys.executable, "-m", "tests.integration.run_folder_ray_scenario"]
    out = run_in_private_network(command, timeout=1100)
    assert out["ok"], json.dumps(out, indent=1)[:4000]
    assert out["held"] >= 1 and out["killed_exit_code"] == -9
    assert out["resume_exit_code"] == 0, out["resume_stderr"]
    assert "taking over the run folder" in out["resume_stderr"]
    assert out["units"] > 10 and len(set(out["named"])) == out["units"]
    assert out["in_files"] == out["named"]
