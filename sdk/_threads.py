"""Carry the OpenTelemetry context into thread-pool and thread work.

Work submitted to a :class:`concurrent.futures.ThreadPoolExecutor` or started as a
:class:`threading.Thread` runs with an empty context by default, so spans created there
lose their parent. :func:`instrument_threads` patches ``ThreadPoolExecutor.submit`` (which
``map`` and ``loop.run_in_executor`` use) and ``Thread.start`` to capture the submitter's
OTel context and attach it around the work. Only the OTel context is carried, not other
context variables of the application.

The patch is installed on first use of a traced step when ``settings().propagate_threads``
is on (the default) and consults the setting at every submit, so turning it off takes effect
at once. :func:`uninstrument_threads` restores the originals exactly, unless another
instrumentation (e.g. ``opentelemetry-instrumentation-threading``) wrapped the methods after
groundtrace did: its wrappers are left in place, and groundtrace's inside them only pass the
calls on, so uninstrumenting one never removes the other.
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
    """What the patch wraps (kept once installed: a wrapper over the patch may still call it)
    and whether it propagates."""

    __slots__ = ("active", "auto_done", "lock", "start", "submit")

    def __init__(self) -> None:
        self.submit: Callable[..., Future[Any]] | None = None
        self.start: Callable[[threading.Thread], None] | None = None
        self.active = False
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
    original = _PATCH.submit or _ORIGINAL_SUBMIT
    try:
        if _PATCH.active and settings().propagate_threads:
            fn = with_current_context(fn)
    except Exception:
        logger.debug("context propagation into executor failed", exc_info=True)
    return original(self, fn, *args, **kwargs)


def _start(self: threading.Thread) -> None:
    original = _PATCH.start or _ORIGINAL_START
    try:
        target = getattr(self, "_target", None)
        if (
            _PATCH.active
            and settings().propagate_threads
            and getattr(target, "__module__", None) != _WORKER_MODULE
            and trace.get_current_span().get_span_context().is_valid
        ):
            self.run = with_current_context(self.run)  # type: ignore[method-assign]
    except Exception:
        logger.debug("context propagation into thread failed", exc_info=True)
    original(self)


_ORIGINAL_SUBMIT: Final = ThreadPoolExecutor.submit
_ORIGINAL_START: Final = threading.Thread.start


def _ours(owner: type, name: str, patch: Callable[..., Any]) -> bool:
    return owner.__dict__.get(name) is patch


def instrument_threads() -> None:
    """Patch ``ThreadPoolExecutor.submit`` and ``Thread.start``; idempotent."""
    with _PATCH.lock:
        if _PATCH.active:
            return
        # None: not in place; else ours is in place, maybe under a wrapper installed since
        if _PATCH.submit is None:
            _PATCH.submit = ThreadPoolExecutor.submit
            ThreadPoolExecutor.submit = _submit  # type: ignore[method-assign,assignment]
        if _PATCH.start is None:
            _PATCH.start = threading.Thread.start
            threading.Thread.start = _start  # type: ignore[method-assign]
        _PATCH.active = True


def uninstrument_threads() -> None:
    """Stop propagating and restore the original ``submit`` and ``start``; idempotent.

    A method another instrumentation wrapped after groundtrace did keeps that wrapper (which
    still calls groundtrace's, now passing calls straight on); once that instrumentation is
    removed too, calling this again restores the original exactly. After this call, traced
    steps no longer re-install the patch automatically.
    """
    with _PATCH.lock:
        _PATCH.auto_done = True
        _PATCH.active = False
        if _ours(ThreadPoolExecutor, "submit", _submit) and _PATCH.submit is not None:
            ThreadPoolExecutor.submit = _PATCH.submit  # type: ignore[method-assign]
            _PATCH.submit = None
        if _ours(threading.Thread, "start", _start) and _PATCH.start is not None:
            threading.Thread.start = _PATCH.start  # type: ignore[method-assign,assignment]
            _PATCH.start = None


def threads_instrumented() -> bool:
    """Whether the thread patches are installed (and propagate)."""
    return _PATCH.active


def ensure_thread_propagation() -> None:
    """Install the patch once, on the first traced step (hot path: one attribute check)."""
    if _PATCH.auto_done:
        return
    _PATCH.auto_done = True
    try:
        instrument_threads()
    except Exception:
        logger.debug("installing thread context propagation failed", exc_info=True)
