"""The local executor, the unit journal, what a cluster worker needs (pickling, counts) and
which Ray cluster a run joins."""

from __future__ import annotations

import asyncio
import pickle
import random
import socket
from pathlib import Path

import msgspec
import pytest

from groundtrace.analyzer.errors import ConfigError, RunStoppedError
from groundtrace.analyzer.executor import (
    LocalExecutor,
    RayExecutor,
    Spread,
    UnitJournal,
    executor_for,
    run_journaled,
    unit_seed,
)
from groundtrace.analyzer.llm import CallCache, ChatRequest, ModelClient, RetryPolicy
from groundtrace.analyzer.llm._client import absorb_counts, take_counts
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest


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


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ray_address_naming_no_cluster_fails_at_once_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{_closed_port()}")
    with pytest.raises(ConfigError, match=r"127\.0\.0\.1:\d+ \(from RAY_ADDRESS\)"):
        asyncio.run(RayExecutor(workers=1).map(_draw, [1]))


def test_the_cluster_ray_start_left_is_found_and_a_stale_address_passed_over(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    from groundtrace.analyzer.executor._ray import _find_cluster

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # `ray start` writes <it>/ray/...
    assert _find_cluster(None)[0] is None  # nothing left: a private instance
    (tmp_path / "ray").mkdir()
    left = tmp_path / "ray" / "ray_current_cluster"
    with socket.socket() as head:  # a head's port, listening
        head.bind(("127.0.0.1", 0))
        head.listen()
        address = f"127.0.0.1:{head.getsockname()[1]}"
        left.write_text(address + "\n")
        assert _find_cluster(None) == (address, "the one `ray start` left on this machine")
    # the cluster was killed without `ray stop`: its file stays, nothing listens any more
    found, why = _find_cluster(None)
    assert found is None and "not reachable" in why
    monkeypatch.setenv("RAY_ADDRESS", address)  # named explicitly: an error, not a fallback
    with pytest.raises(ConfigError, match="from RAY_ADDRESS"):
        _find_cluster(None)


def test_counts_of_a_request_that_ends_after_a_take_reach_the_driver() -> None:
    def slow(req: ServerRequest) -> Reply:
        return Reply(content="late", delay=0.3)

    with OpenAICompatServer(handler=slow) as srv:
        driver = ModelClient(srv.base_url, timeout=5.0)
        worker = pickle.loads(pickle.dumps(driver))
        take_counts()  # what other tests left

        async def run() -> None:
            asking = asyncio.ensure_future(
                worker.complete(
                    ChatRequest(model="m", messages=({"role": "user", "content": "x"},))
                )
            )
            while srv.request_count == 0:  # bounded by the test's timeout
                await asyncio.sleep(0.01)
            absorb_counts(take_counts())  # another unit's result left: requests counted
            await asking
            absorb_counts(take_counts())  # this one's: its completion counted now

        asyncio.run(run())
    snap = driver.stats.snapshot()
    assert (snap.requests, snap.api_calls, snap.completed) == (1, 1, 1)
