"""Carry the OpenTelemetry context into thread-pool and thread work.

Work submitted to a :class:`concurrent.futures.ThreadPoolExecutor` or started as a
:class:`threading.Thread` runs with an empty context by default, so spans created there
lose their parent. :func:`instrument_threads` patches ``ThreadPoolExecutor.submit`` (which
``map`` and ``loop.run_in_executor`` use) and ``Thread.start`` to capture the submitter's
OTel context and attach it around the work. Only the OTel context is carried, not other
context variables of the application.

The patch is installed on first use of a traced step when ``settings().propagate_threads``
is on (the default) and consults the setting at every submit, so turning it off takes effect
at once. :func:`uninstrument_threads` restores the originals exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace

from ._runtime import logger, settings

__all__ = [
    "ensure_thread_propagation",
    "instrument_threads",
    "threads_instrumented",
    "uninstrument_threads",
    "with_current_context",
]

_WORKER_MODULE: Final = "concurrent.futures.thread"


class _Patch:
    __slots__ = ("auto_done", "lock", "start", "submit")

    def __init__(self) -> None:
        self.submit: Callable[..., Future[Any]] | None = None
        self.start: Callable[[threading.Thread], None] | None = None
        self.lock = threading.Lock()
        self.auto_done = False


_PATCH: Final = _Patch()


def with_current_context(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn`` so it runs in the OTel context that is current now."""
    ctx = otel_context.get_current()

    def run_in_context(*args: Any, **kwargs: Any) -> Any:
        token = otel_context.attach(ctx)
        try:
            return fn(*args, **kwargs)
        finally:
            otel_context.detach(token)

    return run_in_context


def _submit(self: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    original = _PATCH.submit
    if original is None:  # uninstrumented while a bound reference was held
        return ThreadPoolExecutor.submit(self, fn, *args, **kwargs)
    try:
        if settings().propagate_threads:
            fn = with_current_context(fn)
    except Exception:
        logger.debug("context propagation into executor failed", exc_info=True)
    return original(self, fn, *args, **kwargs)


def _start(self: threading.Thread) -> None:
    original = _PATCH.start
    try:
        target = getattr(self, "_target", None)
        if (
            original is not None
            and settings().propagate_threads
            and getattr(target, "__module__", None) != _WORKER_MODULE
            and trace.get_current_span().get_span_context().is_valid
        ):
            self.run = with_current_context(self.run)  # type: ignore[method-assign]
    except Exception:
        logger.debug("context propagation into thread failed", exc_info=True)
    (original or threading.Thread.start)(self)


def instrument_threads() -> None:
    """Patch ``ThreadPoolExecutor.submit`` and ``Thread.start``; idempotent."""
    with _PATCH.lock:
        if _PATCH.submit is not None:
            return
        _PATCH.submit = ThreadPoolExecutor.submit
        _PATCH.start = threading.Thread.start
        ThreadPoolExecutor.submit = _submit  # type: ignore[method-assign,assignment]
        threading.Thread.start = _start  # type: ignore[method-assign]


def uninstrument_threads() -> None:
    """Restore the original ``submit`` and ``start``; idempotent.

    After this call, traced steps no longer re-install the patch automatically.
    """
    with _PATCH.lock:
        _PATCH.auto_done = True
        if _PATCH.submit is None or _PATCH.start is None:
            return
        ThreadPoolExecutor.submit = _PATCH.submit  # type: ignore[method-assign]
        threading.Thread.start = _PATCH.start  # type: ignore[method-assign,assignment]
        _PATCH.submit = None
        _PATCH.start = None


def threads_instrumented() -> bool:
    """Whether the thread patches are installed."""
    return _PATCH.submit is not None


def ensure_thread_propagation() -> None:
    """Install the patch once, on the first traced step (hot path: one attribute check)."""
    if _PATCH.auto_done:
        return
    _PATCH.auto_done = True
    try:
        instrument_threads()
    except Exception:
        logger.debug("installing thread context propagation failed", exc_info=True)
