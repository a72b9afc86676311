"""Shared plumbing of the instrumentors: tracer choice, gating, error recording.

Nothing here raises into the application.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from opentelemetry.trace import Span, Status, StatusCode, Tracer, TracerProvider

from groundtrace.sdk import semconv as sc
from groundtrace.sdk._attributes import safe_str
from groundtrace.sdk._runtime import Settings, get_tracer, is_suppressed, logger, settings

__all__ = [
    "INSTRUMENTATION_NAME",
    "active_settings",
    "error_type",
    "record_failure",
    "tracer_source",
]

INSTRUMENTATION_NAME: Final = "groundtrace"
_VERSION: Final = "0.1.0"


def tracer_source(provider: TracerProvider | None) -> Callable[[], Tracer]:
    """A function returning the tracer to use at call time.

    With an explicit ``provider`` the tracer is fixed; otherwise :func:`_runtime.get_tracer`
    is asked on every call, so a later ``configure()`` takes effect without re-instrumenting.
    """
    if provider is None:
        return get_tracer
    tracer = provider.get_tracer(INSTRUMENTATION_NAME, _VERSION, schema_url=sc.SCHEMA_URL)
    return lambda: tracer


def active_settings() -> Settings | None:
    """The settings when tracing should happen now; ``None`` when disabled or suppressed."""
    current = settings()
    if not current.enabled or is_suppressed():
        return None
    return current


def error_type(exc: BaseException) -> str:
    """The ``error.type`` value of an exception: its class name."""
    return type(exc).__qualname__


def record_failure(span: Span, exc: BaseException | None) -> None:
    """Mark ``span`` as failed by ``exc`` (status, ``error.type``, exception event)."""
    if exc is None:
        return
    try:
        span.set_attribute(sc.ERROR_TYPE, error_type(exc))
        span.set_status(Status(StatusCode.ERROR, f"{error_type(exc)}: {safe_str(exc)}"))
        span.record_exception(exc)
    except Exception:
        logger.debug("could not record failure on span", exc_info=True)
