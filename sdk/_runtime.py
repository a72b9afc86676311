"""Process-wide SDK state shared by decorators, instrumentors and ``configure()``.

Everything on the per-span hot path reads one immutable settings record
(:class:`~groundtrace.sdk.Settings`) through :func:`settings` (an attribute load) and a tracer
through :func:`get_tracer`. ``configure()`` swaps both atomically; nothing here ever raises
into the application.
"""

from __future__ import annotations

import logging
import os
from typing import Final

from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, Context, get_current
from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER
from opentelemetry.trace import NoOpTracer, NoOpTracerProvider, Tracer, TracerProvider

from . import semconv as sc
from ._settings import CONTENT_FIELDS, Content, Settings
from ._version import __version__

__all__ = [
    "CONTENT_FIELDS",
    "Content",
    "Settings",
    "active_tracer",
    "get_tracer",
    "install",
    "is_suppressed",
    "logger",
    "settings",
]

logger: Final = logging.getLogger("groundtrace.sdk")

_INSTRUMENTATION_NAME: Final = "groundtrace"
_INSTRUMENTATION_VERSION: Final = __version__


class _State:
    """The settings and tracer in force.

    ``tracer`` caches the tracer of groundtrace's own provider; ``off`` is True when no span
    could ever record (tracing disabled, or a no-op provider configured), so the decorators
    can call straight through after two attribute loads. Without an own provider the global
    OpenTelemetry provider is looked at per call (one module attribute load) and its tracer
    cached by identity, since the global can still be set later.
    """

    __slots__ = (
        "env_provider",
        "global_provider",
        "global_tracer",
        "off",
        "provider",
        "settings",
        "tracer",
        "unset_global_is_off",
    )

    def __init__(self) -> None:
        self.settings = Settings()
        self.provider: TracerProvider | None = None
        self.tracer: Tracer | None = None
        self.off = False
        self.global_provider: TracerProvider | None = None
        self.global_tracer: Tracer | None = None
        self.env_provider = OTEL_PYTHON_TRACER_PROVIDER in os.environ
        self.unset_global_is_off = _HAS_GLOBAL_SLOT and not self.env_provider


#: ``opentelemetry.trace`` keeps the global provider in this module attribute (None = unset).
_HAS_GLOBAL_SLOT: Final = hasattr(trace, "_TRACER_PROVIDER")
_STATE: Final = _State()


def settings() -> Settings:
    """The settings in force."""
    return _STATE.settings


def install(new_settings: Settings, provider: TracerProvider | None = None) -> None:
    """Swap in new settings and (optionally) a tracer provider owned by groundtrace.

    ``provider=None`` means: use whatever the global OpenTelemetry provider is at span time.
    """
    state = _STATE
    state.tracer = None
    state.global_provider = None
    state.global_tracer = None
    state.env_provider = OTEL_PYTHON_TRACER_PROVIDER in os.environ
    state.unset_global_is_off = _HAS_GLOBAL_SLOT and not state.env_provider
    state.settings = new_settings
    state.provider = provider
    state.off = not new_settings.enabled or isinstance(provider, NoOpTracerProvider)


def _new_tracer(provider: TracerProvider) -> Tracer:
    return provider.get_tracer(
        _INSTRUMENTATION_NAME,
        _INSTRUMENTATION_VERSION,
        schema_url=_STATE.settings.scope_schema_url,
    )


def _global_tracer(state: _State) -> Tracer | None:
    """Tracer of the global provider, or None while the global provider cannot record."""
    if _HAS_GLOBAL_SLOT:
        provider: TracerProvider | None = trace._TRACER_PROVIDER
        if provider is None:
            if not state.env_provider:
                return None  # the default proxy without a delegate: spans would not record
            provider = trace.get_tracer_provider()  # loads OTEL_PYTHON_TRACER_PROVIDER
    else:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            return None
    if provider is state.global_provider:
        return state.global_tracer
    tracer: Tracer | None = None
    if not isinstance(provider, NoOpTracerProvider):
        tracer = _new_tracer(provider)
        if isinstance(tracer, NoOpTracer):
            tracer = None
    state.global_tracer = tracer
    state.global_provider = provider
    return tracer


def active_tracer() -> Tracer | None:
    """The tracer steps start their spans on, or None when no span could record.

    None when tracing is disabled, when the configured provider is a no-op, and when nothing
    is configured and the global OpenTelemetry provider is still the default proxy (or a
    no-op). Costs a few attribute loads once the tracer is cached; never raises.
    """
    state = _STATE
    tracer = state.tracer
    if tracer is not None:
        return tracer
    if state.off:
        return None
    provider = state.provider
    if provider is None and state.unset_global_is_off and trace._TRACER_PROVIDER is None:
        return None  # nothing configured anywhere (the hot case of a library left untraced)
    try:
        if provider is None:
            return _global_tracer(state)
        tracer = _new_tracer(provider)
        if state.provider is not provider:  # configure() ran meanwhile: don't cache
            return tracer
        if isinstance(tracer, NoOpTracer):  # e.g. OTEL_SDK_DISABLED=true
            state.off = True
            return None
        state.tracer = tracer
    except Exception:
        logger.debug("getting a tracer failed", exc_info=True)
        return None
    return tracer


def get_tracer() -> Tracer:
    """Tracer of groundtrace's provider if configured, else of the global provider."""
    tracer = active_tracer() if _STATE.settings.enabled else None
    if tracer is None:
        provider = _STATE.provider or trace.get_tracer_provider()
        tracer = _new_tracer(provider)
    return tracer


def is_suppressed(context: Context | None = None) -> bool:
    """Whether OpenTelemetry instrumentation is suppressed in ``context`` (default: current).

    Both keys OpenTelemetry honours count: ``_SUPPRESS_INSTRUMENTATION_KEY`` and the legacy
    plain ``"suppress_instrumentation"`` key older instrumentations still set.
    """
    ctx = get_current() if context is None else context
    return bool(
        ctx.get(_SUPPRESS_INSTRUMENTATION_KEY) or ctx.get(sc.SUPPRESS_INSTRUMENTATION_KEY_NAME)
    )
