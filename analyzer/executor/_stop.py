"""Turning SIGTERM/SIGINT into a graceful stop: no new units, in-flight ones finish."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

__all__ = ["stop_on_signals"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def stop_on_signals(request_stop: Callable[[], None]) -> Iterator[None]:
    """While inside, the first SIGTERM/SIGINT calls ``request_stop``; a second one cancels.

    Installed only where the running loop can take signal handlers (the main thread) and
    the process left the signal's default handler in place: a host that handles the signal
    itself (an async service, ``groundtrace monitor``) keeps its handler, and stops the run
    its own way.
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

    installed: list[signal.Signals] = []
    for sig in _SIGNALS:
        if signal.getsignal(sig) not in (signal.SIG_DFL, signal.default_int_handler):
            continue
        try:
            loop.add_signal_handler(sig, on_signal)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
