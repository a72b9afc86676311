"""Shared plumbing of the instrumentors: wrapper layers, tracer choice, gating, failures.

Instrumentors take these names from :mod:`groundtrace.sdk.instrumentation`, which exports them
with the other helpers an instrumentor needs. Nothing here raises into the application.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from opentelemetry.trace import Span, Tracer, TracerProvider
from wrapt import BaseObjectProxy, FunctionWrapper

from groundtrace.sdk._failure import record_exception
from groundtrace.sdk._record import Recorder
from groundtrace.sdk._runtime import Settings, get_tracer, is_suppressed, logger, settings
from groundtrace.sdk._version import __version__

__all__ = [
    "INSTRUMENTATION_NAME",
    "Layers",
    "Wrapper",
    "active_settings",
    "record_failure",
    "tracer_source",
]

INSTRUMENTATION_NAME: Final = "groundtrace"
_VERSION: Final = __version__

#: A wrapt wrapper function: ``(wrapped, instance, args, kwargs) -> result``.
Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]


class Layers:
    """groundtrace's own wrapper layers on a library's methods, put in and taken out together.

    Other instrumentations may wrap the same methods (OpenLLMetry and OpenTelemetry's
    openai-v2 wrap ``create``), and OpenTelemetry's ``unwrap``, which they uninstall with,
    takes off the outermost layer whoever owns it. So a layer goes innermost, right around
    the original, where another tool's uninstall never takes it off (groundtrace's span is
    then the child of theirs); :meth:`unwrap` splices out exactly the layers put in,
    wherever they sit in the chain by then, and leaves every other tool's layer in place.
    """

    __slots__ = ("_installed",)

    def __init__(self) -> None:
        self._installed: list[tuple[type, str, FunctionWrapper[..., Any]]] = []

    def wrap(self, owner: type, name: str, wrapper: Wrapper) -> None:
        """Put ``wrapper`` around ``owner.name`` as the innermost wrapt layer."""
        above: BaseObjectProxy[Any] | None = None
        inner: Any = vars(owner)[name]
        while isinstance(inner, BaseObjectProxy):  # other tools' wrapt layers
            above, inner = inner, inner.__wrapped__
        layer: FunctionWrapper[..., Any] = FunctionWrapper(inner, wrapper)
        if above is None:
            setattr(owner, name, layer)
        else:
            above.__wrapped__ = layer
        self._installed.append((owner, name, layer))

    def unwrap(self) -> None:
        """Splice every layer :meth:`wrap` put in out of its chain (idempotent)."""
        while self._installed:
            owner, name, layer = self._installed.pop()
            try:
                _splice_out(owner, name, layer)
            except Exception:
                logger.debug("could not remove the wrapper of %s.%s", owner, name, exc_info=True)


def tracer_source(provider: TracerProvider | None) -> Callable[[], Tracer]:
    """A function returning the tracer to use at call time.

    With an explicit ``provider`` the tracer is fixed; otherwise :func:`_runtime.get_tracer`
    is asked on every call, so a later ``configure()`` takes effect without re-instrumenting.
    """
    if provider is None:
        return get_tracer
    schema_url = settings().scope_schema_url
    tracer = provider.get_tracer(INSTRUMENTATION_NAME, _VERSION, schema_url=schema_url)
    return lambda: tracer


def active_settings() -> Settings | None:
    """The settings when tracing should happen now; ``None`` when disabled or suppressed."""
    current = settings()
    if not current.enabled or is_suppressed():
        return None
    return current


def record_failure(span: Span, rec: Recorder, exc: BaseException | None) -> None:
    """Mark ``span`` as failed by ``exc`` as the decorators do (``error.type`` among ``rec``'s
    attributes, status and exception event, the message and traceback masked through ``rec``);
    call it before ``rec``'s attributes are written."""
    if exc is None:
        return
    try:
        record_exception(span, rec, exc)
    except Exception:
        logger.debug("could not record failure on span", exc_info=True)


def _splice_out(owner: type, name: str, layer: FunctionWrapper[..., Any]) -> None:
    """Take ``layer`` out of the wrapt chain on ``owner.name``, wherever it sits.

    OpenTelemetry's ``unwrap`` of an outer layer leaves the *bound* form of the next layer
    (a wrapper whose ``_self_parent`` is that layer) on the class, so both forms are ours.
    """
    above: BaseObjectProxy[Any] | None = None
    entry: Any = vars(owner).get(name)
    while isinstance(entry, BaseObjectProxy):
        if entry is layer or getattr(entry, "_self_parent", None) is layer:
            if above is None:
                setattr(owner, name, layer.__wrapped__)
            else:
                above.__wrapped__ = layer.__wrapped__
            return
        above, entry = entry, entry.__wrapped__
