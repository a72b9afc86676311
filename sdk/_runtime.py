"""Process-wide SDK state shared by decorators, instrumentors and ``configure()``.

Everything on the per-span hot path reads one immutable :class:`Settings` object through
:func:`settings` (an attribute load) and a tracer through :func:`get_tracer`. ``configure()``
swaps both atomically; nothing here ever raises into the application.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, get_value
from opentelemetry.trace import Tracer, TracerProvider

from . import semconv as sc

__all__ = [
    "CONTENT_FIELDS",
    "Settings",
    "get_tracer",
    "install",
    "is_suppressed",
    "logger",
    "settings",
]

logger: Final = logging.getLogger("groundtrace.sdk")

#: Text fields whose capture can be switched on/off one by one.
CONTENT_FIELDS: Final = frozenset(
    {"query", "evidence", "answer", "messages", "tool_arguments", "tool_results", "io"}
)

_INSTRUMENTATION_NAME: Final = "groundtrace"
_INSTRUMENTATION_VERSION: Final = "0.1.0"


@dataclass(frozen=True, slots=True)
class Settings:
    """Immutable SDK settings; replaced as a whole by ``configure()``.

    Attributes:
        enabled: master switch; when False decorators call straight through.
        capture: the content fields captured (see :data:`CONTENT_FIELDS`).
        max_attribute_length: strings longer than this are truncated (and listed in
            ``groundtrace.truncated``).
        max_evidence_items: evidence lists are cut to this many items.
        redact: text masker applied to every captured text field before it is recorded;
            returns the masked text and the names of the maskers that fired.
        propagate_threads: propagate the OTel context into executor/thread work started
            inside a traced step.
    """

    enabled: bool = True
    capture: frozenset[str] = CONTENT_FIELDS
    max_attribute_length: int = 32_768
    max_evidence_items: int = 100
    redact: Callable[[str], tuple[str, tuple[str, ...]]] | None = None
    propagate_threads: bool = True
    extra: dict[str, object] = field(default_factory=dict)

    def captures(self, field_name: str) -> bool:
        """Whether the named content field is captured."""
        return field_name in self.capture


class _State:
    __slots__ = ("provider", "settings", "tracer")

    def __init__(self) -> None:
        self.settings = Settings()
        self.provider: TracerProvider | None = None
        self.tracer: Tracer | None = None


_STATE: Final = _State()


def settings() -> Settings:
    """The settings in force."""
    return _STATE.settings


def install(new_settings: Settings, provider: TracerProvider | None = None) -> None:
    """Swap in new settings and (optionally) a tracer provider owned by groundtrace.

    ``provider=None`` means: use whatever the global OpenTelemetry provider is at span time.
    """
    _STATE.settings = new_settings
    _STATE.provider = provider
    _STATE.tracer = None


def get_tracer() -> Tracer:
    """Tracer of groundtrace's provider if configured, else of the global provider."""
    tracer = _STATE.tracer
    if tracer is None:
        provider = _STATE.provider or trace.get_tracer_provider()
        tracer = provider.get_tracer(
            _INSTRUMENTATION_NAME, _INSTRUMENTATION_VERSION, schema_url=sc.SCHEMA_URL
        )
        if _STATE.provider is not None:
            _STATE.tracer = tracer  # the global provider may still be swapped: don't cache it
    return tracer


def is_suppressed() -> bool:
    """Whether OpenTelemetry instrumentation is suppressed in the current context."""
    return bool(get_value(_SUPPRESS_INSTRUMENTATION_KEY))
