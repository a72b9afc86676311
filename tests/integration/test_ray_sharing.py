"""On a real local Ray cluster: a run's maps share its workers, and drivers share a bucket.

One subprocess ``unshare -n sh -c 'ip link set lo up && python -m tests.integration.ray_sharing'``
starts the cluster, a counting server and two driver processes, and prints one JSON line.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.namespace import run_ray_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_ray_scenario("tests.integration.ray_sharing", timeout=1100)


def test_every_map_of_a_run_reuses_its_workers(result: dict[str, Any]) -> None:
    first, second = result["reuse"]["pids"]
    assert len(first) == 2 and first == second


def test_two_drivers_share_the_endpoint_rate_and_a_429_pauses_both(
    result: dict[str, Any],
) -> None:
    drivers = result["drivers"]
    assert drivers["exit_codes"] == [0, 0], drivers["stderr_tail"]
    assert drivers["calls"] == 17  # 16 calls and the one retried after the 429
    assert sorted(drivers["per_driver"].values()) == [8, 9]
    assert drivers["observed_per_s"] <= drivers["limit"] * 1.1
    # neither driver sent anything before the Retry-After was over
    for waited in drivers["first_after_429_s"].values():
        assert waited >= drivers["retry_after"] - 0.05
