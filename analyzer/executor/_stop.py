"""Turning SIGTERM/SIGINT into a graceful stop: no new units, in-flight ones finish."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Taken", "stop_on_signals"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Taken:
    """The signals a run took from the process's handlers while it ran."""

    def __init__(self) -> None:
        self.seen: list[signal.Signals] = []
        self.hosts: dict[signal.Signals, Callable[[int, Any], Any]] = {}

    def pass_on(self) -> None:
        """Call the host's own handler (put back by now) once for each signal the run took:
        for a run that ended whole, its stop changed nothing, and a host waiting for SIGTERM
        (``groundtrace monitor``, an async service) must still hear it. Python's and
        ``asyncio.run``'s Ctrl-C handlers and the default actions are not called."""
        for sig in dict.fromkeys(self.seen):
            if sig in self.hosts:
                self.hosts[sig](sig, None)


def _ctrl_c(handler: Any) -> bool:
    """Python's or ``asyncio.run``'s own Ctrl-C handler (KeyboardInterrupt, or the main task
    cancelled): what the run's graceful stop stands in for."""
    if handler is signal.default_int_handler:
        return True
    return getattr(getattr(handler, "func", None), "__name__", "") == "_on_sigint"


@contextlib.contextmanager
def stop_on_signals(request_stop: Callable[[], None]) -> Iterator[Taken]:
    """While inside, the first SIGTERM/SIGINT calls ``request_stop``; a second one cancels.

    Installed only where the running loop can take signal handlers (the main thread);
    elsewhere the default handlers stay and nothing changes. The process's handler from before
    (a host's own, set with ``signal.signal``: an async service, ``groundtrace monitor``, a Ray
    driver's) is put back when the run ends; :meth:`Taken.pass_on` then hands it the signals
    a run that ended whole took.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    taken = Taken()

    def on_signal(sig: signal.Signals) -> None:
        taken.seen.append(sig)
        if len(taken.seen) == 1:
            request_stop()
        elif task is not None:
            task.cancel()

    installed: list[tuple[signal.Signals, Any]] = []
    for sig in _SIGNALS:
        before = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, on_signal, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append((sig, before))
    try:
        yield taken
    finally:
        for sig, before in installed:
            loop.remove_signal_handler(sig)
            # a loop's own handler (asyncio's no-op stand-in) cannot be put back this way
            if before is not None and getattr(before, "__name__", "") != "_sighandler_noop":
                signal.signal(sig, before)
                if callable(before) and not _ctrl_c(before):
                    taken.hosts[sig] = before
