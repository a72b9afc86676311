"""The local executor, the unit journal and what a cluster worker needs (pickling, counts)."""

from __future__ import annotations

import asyncio
import pickle
import random
from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer.errors import ConfigError, RunStoppedError
from groundtrace.analyzer.executor import (
    LocalExecutor,
    Spread,
    UnitJournal,
    executor_for,
    run_journaled,
    unit_seed,
)
from groundtrace.analyzer.llm import (
    CallCache,
    ChatRequest,
    ModelClient,
    RetryPolicy,
    absorb_counts,
    take_counts,
)
from tests.support.openai_server import OpenAICompatServer


class Box(msgspec.Struct, frozen=True):
    """A unit result as the analyses return them."""

    unit: int
    draw: int


async def _draw(unit: int) -> Box:
    # finishing order is scrambled; the value depends on the unit alone
    await asyncio.sleep(random.random() / 200)
    return Box(unit, random.Random(unit_seed(7, f"u{unit}")).randrange(10**6))


def test_results_keep_input_order_and_do_not_depend_on_concurrency() -> None:
    units = list(range(40))
    runs = [asyncio.run(LocalExecutor(c).map(_draw, units)) for c in (1, 3, 16)]
    assert runs[0] == runs[1] == runs[2]
    assert [b.unit for b in runs[0]] == units


def test_at_most_concurrency_units_are_in_flight() -> None:
    busy = peak = 0

    async def work(_: int) -> int:
        nonlocal busy, peak
        busy += 1
        peak = max(peak, busy)
        await asyncio.sleep(0.005)
        busy -= 1
        return 0

    asyncio.run(LocalExecutor(3).map(work, list(range(20))))
    assert peak == 3


def test_a_stop_request_drains_in_flight_units_then_raises() -> None:
    executor = LocalExecutor(4)
    seen: list[int] = []

    async def work(unit: int) -> int:
        if unit == 5:
            executor.request_stop()
        await asyncio.sleep(0.01)
        return unit

    with pytest.raises(RunStoppedError) as caught:
        asyncio.run(executor.map(work, list(range(50)), on_result=lambda i, _: seen.append(i)))
    # the units running when the stop came finished and reached on_result; none started after
    assert sorted(seen) == list(range(len(seen)))
    assert 6 <= len(seen) <= 9 and caught.value.done == len(seen)
    assert caught.value.exit_code == 130


def test_a_journaled_unit_is_not_run_again(tmp_path: Path) -> None:
    journal = UnitJournal(tmp_path / "units.sqlite")
    ran: list[int] = []

    async def work(unit: int) -> Box:
        ran.append(unit)
        return Box(unit, -unit)

    keys = [f"k{u}" for u in range(6)]
    executor = LocalExecutor(2)
    first = asyncio.run(run_journaled(executor, work, list(range(6)), keys, journal=journal,
                                      kind=Box, keep=lambda b: b.unit % 2 == 0))  # fmt: skip
    assert sorted(ran) == list(range(6)) and len(journal) == 3
    ran.clear()
    again = asyncio.run(run_journaled(executor, work, list(range(6)), keys, journal=journal,
                                      kind=Box, keep=lambda b: b.unit % 2 == 0))  # fmt: skip
    assert again == first
    assert sorted(ran) == [1, 3, 5]  # results `keep` refused are retried, the others not
    journal.close()


def test_spread_passes_tuple_units_as_arguments() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    assert asyncio.run(LocalExecutor(2).map(Spread(add), [(1, 2), (3, 4)])) == [3, 7]


def test_unit_seed_depends_on_the_key_and_the_base_only() -> None:
    assert unit_seed(1, "a") == unit_seed(1, "a")
    assert len({unit_seed(1, "a"), unit_seed(2, "a"), unit_seed(1, "b")}) == 3
    assert 0 <= unit_seed(0, "x") < 2**63


def test_retry_jitter_is_a_function_of_the_call_not_of_the_order() -> None:
    policy = RetryPolicy(seed=3)
    first = [policy.delay(1, key=k) for k in ("a", "b", "c")]
    assert [policy.delay(1, key=k) for k in ("c", "a", "b")] == [first[2], first[0], first[1]]
    assert all(0.25 <= d <= 0.5 for d in first)


def test_the_executor_option_is_checked() -> None:
    assert executor_for("local", concurrency=2).name == "local"
    assert executor_for("ray", concurrency=2, workers=3).name == "ray"
    with pytest.raises(ConfigError, match="unknown executor"):
        executor_for("spark", concurrency=2)
    with pytest.raises(ConfigError, match="--ray-address needs"):
        executor_for("local", concurrency=2, address="auto")


def test_a_pickled_client_calls_the_same_endpoint_and_reports_its_counts(tmp_path: Path) -> None:
    with OpenAICompatServer() as srv:
        cache = CallCache(tmp_path / "llm_cache.sqlite")
        driver = ModelClient(srv.base_url, cache=cache, concurrency=3, timeout=5.0)
        worker = pickle.loads(pickle.dumps(driver))  # what a cluster worker receives
        assert worker.token == driver.token and worker.concurrency == 3
        assert worker.cache is not None and worker.cache.path == cache.path
        request = ChatRequest(model="m", messages=({"role": "user", "content": "hi"},))
        result = asyncio.run(worker.complete(request))
        assert result.ok and srv.request_count == 1
        assert driver.cache is not None and driver.cache.get(result.key) is not None
        counts = take_counts()
        assert take_counts() == {}  # taken once
        absorb_counts(counts)
        snap = driver.stats.snapshot()
        assert (snap.requests, snap.api_calls, snap.completed) == (1, 1, 1)
        worker.cache.close()
        cache.close()
