"""The analyses on a real local Ray cluster: the same answer as the local executor, and kills.

The cluster runs in a private network namespace (some Ray services bind every interface): one
subprocess ``unshare -n sh -c 'ip link set lo up && python -m tests.integration.ray_scenario'``
starts a head and a second node, a counting OpenAI-compatible server, runs the scenario, stops
everything and prints one JSON line, asserted on here.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.support.namespace import require_ray, run_in_private_network

# Ray alone takes a minute or more to start on a busy 2-core machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    require_ray()
    command = [sys.executable, "-m", "tests.integration.ray_scenario"]
    out = run_in_private_network(command, timeout=1700)
    assert out["ok"], json.dumps(out, indent=1)[:6000]
    return out


def test_an_audit_on_ray_is_identical_to_the_local_run(result: dict[str, Any]) -> None:
    audit = result["audit"]
    assert audit["identical"] and audit["answers"] > 0 and audit["pairs"] > 0
    # every answer is a trace, written by the workers that answered (one file per process)
    assert audit["traced_answers_ray"] == audit["traced_answers_local"] == audit["answers"]
    assert audit["trace_files_ray"] >= 2
    # the workers' model-call counters reach the run record
    assert audit["calls_ray"]["requests"] == audit["calls_local"]["requests"] > 0


def test_a_judge_run_on_ray_is_identical_to_the_local_run(result: dict[str, Any]) -> None:
    assert result["judge"]["identical"] and result["judge"]["cases"] == 24


def test_interventions_on_ray_are_identical_to_the_local_run(result: dict[str, Any]) -> None:
    interventions = result["interventions"]
    assert interventions["identical"] and interventions["units"] > 0
    assert interventions["counterfactuals_ray"] == interventions["units"]


def test_path_checks_on_ray_are_identical_to_the_local_run(result: dict[str, Any]) -> None:
    assert result["paths"]["identical"] and result["paths"]["verdicts"] == 40


def test_gate_checks_on_ray_are_identical_to_the_local_run(result: dict[str, Any]) -> None:
    assert result["gate"]["identical"] and result["gate"]["cases"] > 0


def test_an_error_of_the_work_reaches_the_driver_as_raised(result: dict[str, Any]) -> None:
    assert result["errors"] == {"raised": "ReplayError", "message": "unit 3 cannot be set up"}


def test_the_rate_limit_and_a_429_hold_across_workers(result: dict[str, Any]) -> None:
    rate = result["limits"]["rate"]
    assert rate["calls"] == 17  # 16 cases and the one retried after the 429
    assert rate["observed_per_s"] <= rate["limit"] * 1.1
    # no worker sent anything before the Retry-After was over
    assert rate["first_after_429_s"] >= rate["retry_after"] - 0.05


def test_max_calls_is_counted_across_workers(result: dict[str, Any]) -> None:
    budget = result["limits"]["budget"]
    assert budget["raised"] == "BudgetReachedError" and budget["exit_code"] == 5
    assert budget["max_calls"] <= budget["calls"] <= budget["bound"]
    assert budget["done"] == budget["calls"]  # one call per case: every call's case was kept


def test_a_killed_worker_is_retried_without_duplicate_results(result: dict[str, Any]) -> None:
    killed = result["kill_worker"]
    assert killed["killed_pid"] is not None
    assert killed["duplicate_results"] == 0 and killed["identical_to_local"]


def test_a_killed_driver_resumes_repeating_at_most_its_calls_in_flight(
    result: dict[str, Any],
) -> None:
    killed = result["driver_SIGKILL"]
    assert killed["exit_code"] == -9 and killed["resume_exit_code"] == 0
    assert killed["calls_before_stop"] >= 12 and killed["units_journaled"] > 0
    assert killed["calls_repeated"] <= killed["in_flight_bound"]


def test_a_terminated_driver_resumes_repeating_zero_calls(result: dict[str, Any]) -> None:
    stopped = result["driver_SIGTERM"]
    assert stopped["exit_code"] == 130, stopped["stderr_tail"]
    assert "stopped after" in stopped["stderr_tail"] and stopped["resume_exit_code"] == 0
    assert stopped["calls_repeated"] == 0 and stopped["calls_before_stop"] >= 12
