"""The Ray executor as users run it, on a real local Ray cluster: a run joins the cluster that
is running (``RAY_ADDRESS`` or ``ray start``'s address file), identical requests of units on
different workers make one call, and two drivers at one endpoint keep its rate with no burst.

One subprocess (``unshare -n sh -c 'ip link set lo up && python -m
tests.integration.ray_production'``) starts a one-node cluster and counting servers, measures,
stops everything and prints one JSON line, asserted on here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.namespace import run_ray_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

#: How much closer than ``1 / rate`` two call starts may come, in intervals: the limiter lets
#: a start go up to this late (``LATE`` of ``llm._limit``; a later one is asked for again).
LATE = 0.1


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return run_ray_scenario("tests.integration.ray_production", timeout=1100)


@pytest.mark.parametrize("found_by", ["RAY_ADDRESS", "ray start"])
def test_a_run_without_ray_address_joins_the_running_cluster(
    result: dict[str, Any], found_by: str
) -> None:
    joined = result["joins"][found_by]
    assert joined["exit_code"] == 0, joined["stderr_tail"]
    address = result["joins"]["address"]
    assert any(f"joined the Ray cluster at {address}" in line for line in joined["ray_lines"])


def test_identical_requests_on_two_workers_make_one_call(result: dict[str, Any]) -> None:
    coalesced = result["coalesce"]
    assert coalesced["failed"] == 0
    assert coalesced["calls"] == coalesced["distinct"] == coalesced["api_calls"]
    # every unit that asked got the one answer
    assert set(coalesced["answers_per_request"].values()) == {1}
    assert coalesced["requests"] == coalesced["units"]
    # the other askers waited for the call (or came after it ended: a cache hit)
    assert (
        coalesced["coalesced"] + coalesced["cache_hits"]
        == coalesced["units"] - coalesced["distinct"]
    )


def test_two_drivers_keep_the_shared_rate_with_no_burst(result: dict[str, Any]) -> None:
    schedule = result["schedule"]
    assert schedule["exit_codes"] == [0, 0], schedule["stderr_tail"]
    assert schedule["calls"] == sum(schedule["per_driver"].values()) == 48
    rate = schedule["limit"]
    # at the server: no more than the rate in any second (plus one, for the window's edge)
    assert schedule["most_in_a_second"] <= rate + 1
    # where the calls start (the workers of both drivers): spaced by the interval, less LATE
    assert schedule["starts"] == 48
    assert schedule["most_starts_in_a_second"] <= rate + 1
    assert schedule["min_start_gap_s"] >= (1 - LATE) / rate
