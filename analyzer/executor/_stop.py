"""Turning SIGTERM/SIGINT into a graceful stop: no new units, in-flight ones finish."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["stop_on_signals"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def stop_on_signals(request_stop: Callable[[], None]) -> Iterator[None]:
    """While inside, the first SIGTERM/SIGINT calls ``request_stop``; a second one cancels.

    Installed only where the running loop can take signal handlers (the main thread);
    elsewhere the default handlers stay and nothing changes. The process's handler from before
    (a host's own, set with ``signal.signal``: an async service, ``groundtrace monitor``, a Ray
    driver's) is put back when the run ends.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    seen = 0

    def on_signal() -> None:
        nonlocal seen
        seen += 1
        if seen == 1:
            request_stop()
        elif task is not None:
            task.cancel()

    installed: list[tuple[signal.Signals, Any]] = []
    for sig in _SIGNALS:
        before = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, on_signal)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append((sig, before))
    try:
        yield
    finally:
        for sig, before in installed:
            loop.remove_signal_handler(sig)
            # a loop's own handler (asyncio's no-op stand-in) cannot be put back this way
            if before is not None and getattr(before, "__name__", "") != "_sighandler_noop":
                signal.signal(sig, before)
