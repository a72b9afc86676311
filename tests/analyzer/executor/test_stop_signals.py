"""A run's graceful stop on SIGTERM/SIGINT, and the host's own handlers put back after it.

A host that handles SIGTERM itself (``groundtrace monitor``, an async service, a Ray driver)
keeps its handler once a run inside it has ended; during the run the run's graceful stop
answers the signal (the in-flight units finish, ``RunStoppedError``).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from groundtrace.analyzer.errors import RunStoppedError
from groundtrace.analyzer.executor import LocalExecutor
from groundtrace.analyzer.executor._stop import stop_on_signals


@pytest.fixture
def host_handler() -> Iterator[list[int]]:
    heard: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, _: heard.append(signum))
    try:
        yield heard
    finally:
        signal.signal(signal.SIGTERM, before)


def test_the_run_answers_a_signal_then_the_hosts_handler_is_back(host_handler: list[int]) -> None:
    stopped: list[str] = []

    async def run() -> Any:
        with stop_on_signals(lambda: stopped.append("stop")):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):  # the loop delivers it
                if stopped:
                    break
                await asyncio.sleep(0.01)
        return signal.getsignal(signal.SIGTERM)

    after = asyncio.run(run())
    assert stopped == ["stop"] and host_handler == []  # the run's stop, not the host's
    assert after not in (signal.SIG_DFL, signal.SIG_IGN)  # not the default: it would kill us
    os.kill(os.getpid(), signal.SIGTERM)  # after the run: the host's handler again
    assert host_handler == [signal.SIGTERM]


def test_without_a_host_handler_the_default_is_back() -> None:
    async def run() -> Any:
        with stop_on_signals(lambda: None):
            pass
        return signal.getsignal(signal.SIGTERM)

    assert asyncio.run(run()) == signal.SIG_DFL


def test_a_signal_a_run_took_reaches_the_host_when_the_run_ended_whole(
    host_handler: list[int],
) -> None:
    """SIGTERM while the last unit ends: the stop changes nothing (no unit was left to start),
    the run returns whole, and the host (a monitor that stops on SIGTERM) still hears it -- or
    it would run on after a supervisor's one SIGTERM."""

    async def last(unit: int) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.05)  # the loop takes it: the run's handler, not the host's
        assert host_handler == []
        return unit

    assert asyncio.run(LocalExecutor(1).map(last, [1])) == [1]
    assert host_handler == [signal.SIGTERM]


def test_a_signal_that_stopped_the_run_is_not_passed_on(host_handler: list[int]) -> None:
    async def unit(n: int) -> int:
        if n == 0:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(0.05)
        return n

    with pytest.raises(RunStoppedError):
        asyncio.run(LocalExecutor(1).map(unit, [0, 1, 2]))
    assert host_handler == []  # the run answered it: RunStoppedError tells the host


def test_ctrl_c_a_whole_run_took_is_not_turned_into_keyboard_interrupt() -> None:
    async def last(unit: int) -> int:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.05)
        return unit

    assert asyncio.run(LocalExecutor(1).map(last, [1])) == [1]  # asyncio.run's own handler
