"""Fork safety: re-create the SDK's threads and locks in a forked child, flush at its exit.

A forked child has only the thread that called ``fork``; every lock another thread held at
that moment stays held forever in the child, and the export threads are gone. Objects that
own threads or locks register here (:func:`at_fork_reinit`, as the OpenTelemetry SDK's own
batch processor does with :func:`os.register_at_fork`): in the child they build fresh locks,
queues and threads and start counting from zero (the parent's spans are the parent's to
export).

A child's spans must also leave it when it ends. A child that returns or calls
``sys.exit`` runs the :mod:`atexit` functions it inherited; a :mod:`multiprocessing` child
started with the ``fork`` method ends with ``os._exit`` and runs no :mod:`atexit` function,
only ``multiprocessing.util``'s finalizers. :func:`run_at_exit` registers a function for
both: with :mod:`atexit` and, in every ``multiprocessing`` child, as a finalizer run when the
child's target returns or raises.

Nothing here ever raises into the application: a failing handler is logged at debug level.
"""

from __future__ import annotations

import atexit
import os
import sys
import weakref
from collections.abc import Callable
from typing import Final

from ._runtime import logger

__all__ = ["at_fork_reinit", "run_at_exit"]

#: ``multiprocessing.util.Finalize`` priority of the exit flush: 0 runs among the first
#: finalizers a child runs (``_exit_function`` runs priorities >= 0 first), after the target.
_EXIT_PRIORITY: Final = 0


def at_fork_reinit(method: Callable[[], None]) -> None:
    """Call the bound ``method`` in every child forked from now on (while its object lives).

    Only a weak reference is kept, so registering does not keep the object alive.
    """
    register = getattr(os, "register_at_fork", None)
    if register is None:  # no fork on this platform
        return
    weak = weakref.WeakMethod(method)

    def after_in_child() -> None:
        bound = weak()
        if bound is None:
            return
        try:
            bound()
        except Exception:
            logger.debug("re-initialising %r after fork failed", bound, exc_info=True)

    register(after_in_child=after_in_child)


class _ExitFunctions:
    """The functions run at process exit, in the parent and in every forked child."""

    __weakref__: object

    def __init__(self) -> None:
        self.functions: list[Callable[[], None]] = []
        self.ran_in: int | None = None  # pid of the process that ran them

    def run(self) -> None:
        """Run each function once per process (atexit and a finalizer may both call this)."""
        pid = os.getpid()
        if self.ran_in == pid:
            return
        self.ran_in = pid
        for function in self.functions:
            try:
                function()
            except Exception:
                logger.debug("exit function %r failed", function, exc_info=True)

    def after_fork(self) -> None:
        """In a forked child: have a ``multiprocessing`` child run the functions at its end.

        ``multiprocessing`` clears the finalizers a child inherits, then calls the functions
        registered with ``register_after_fork``: the finalizer is registered from there.
        """
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            util.register_after_fork(self, _ExitFunctions.register_finalizer)

    def register_finalizer(self) -> None:
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            util.Finalize(self, self.run, exitpriority=_EXIT_PRIORITY)


_EXIT: Final = _ExitFunctions()


def run_at_exit(function: Callable[[], None]) -> None:
    """Run ``function`` when this process exits, and when each process forked from it does.

    Covered: a normal exit or ``sys.exit`` (through :mod:`atexit`, inherited by forked
    children) and the end of a ``multiprocessing`` fork child's target (``os._exit`` follows,
    which runs no :mod:`atexit` function). Not covered: a process killed by a signal it does
    not handle, or one that calls ``os._exit`` itself. Registering twice runs it once.
    """
    if function in _EXIT.functions:
        return
    if not _EXIT.functions:
        atexit.register(_EXIT.run)
        at_fork_reinit(_EXIT.after_fork)
    _EXIT.functions.append(function)
