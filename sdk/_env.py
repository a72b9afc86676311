"""Reading ``GROUNDTRACE_*`` / ``OTEL_*`` environment variables without ever raising.

Every reader returns ``None`` when the variable is unset or empty, so callers can apply the
precedence *explicit argument > GROUNDTRACE_* > OTEL_* > documented default*. A value that
cannot be parsed logs a warning naming the variable and the default used instead, and is
treated as unset: a typo in the environment never crashes the application.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from typing import Final, TypeVar

from . import semconv as sc

__all__ = [
    "ENV_APP_VERSION",
    "ENV_CAPTURE_CONTENT",
    "ENV_ENABLED",
    "ENV_EXPORTER",
    "ENV_FILE_BACKUP_COUNT",
    "ENV_FILE_MAX_BYTES",
    "ENV_FILE_PATH",
    "ENV_MAX_ATTRIBUTE_LENGTH",
    "ENV_MAX_EVIDENCE_ITEMS",
    "ENV_MAX_QUEUE_SIZE",
    "ENV_PROPAGATE_THREADS",
    "ENV_REDACT",
    "ENV_SAMPLE_RATIO",
    "ENV_SERVICE_NAME",
    "ENV_SHUTDOWN_TIMEOUT",
    "OTEL_BSP_EXPORT_TIMEOUT",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_CAPTURE_MESSAGE_CONTENT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_TRACES_EXPORTER",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "env_bool",
    "env_float",
    "env_int",
    "env_list",
    "env_str",
    "warn_bad",
]

_logger: Final = logging.getLogger("groundtrace.sdk")

P: Final = sc.ENV_PREFIX
ENV_ENABLED: Final = P + "ENABLED"
ENV_SERVICE_NAME: Final = P + "SERVICE_NAME"
ENV_APP_VERSION: Final = P + "APP_VERSION"
ENV_EXPORTER: Final = P + "EXPORTER"
ENV_FILE_PATH: Final = P + "FILE_PATH"
ENV_FILE_MAX_BYTES: Final = P + "FILE_MAX_BYTES"
ENV_FILE_BACKUP_COUNT: Final = P + "FILE_BACKUP_COUNT"
ENV_SAMPLE_RATIO: Final = P + "SAMPLE_RATIO"
ENV_CAPTURE_CONTENT: Final = P + "CAPTURE_CONTENT"
ENV_MAX_ATTRIBUTE_LENGTH: Final = P + "MAX_ATTRIBUTE_LENGTH"
ENV_MAX_EVIDENCE_ITEMS: Final = P + "MAX_EVIDENCE_ITEMS"
ENV_REDACT: Final = P + "REDACT"
ENV_PROPAGATE_THREADS: Final = P + "PROPAGATE_THREADS"
ENV_MAX_QUEUE_SIZE: Final = P + "MAX_QUEUE_SIZE"
ENV_SHUTDOWN_TIMEOUT: Final = P + "SHUTDOWN_TIMEOUT"

OTEL_SDK_DISABLED: Final = "OTEL_SDK_DISABLED"
OTEL_SERVICE_NAME: Final = "OTEL_SERVICE_NAME"
OTEL_TRACES_EXPORTER: Final = "OTEL_TRACES_EXPORTER"
OTEL_EXPORTER_OTLP_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_PROTOCOL"
OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
OTEL_TRACES_SAMPLER: Final = "OTEL_TRACES_SAMPLER"
OTEL_TRACES_SAMPLER_ARG: Final = "OTEL_TRACES_SAMPLER_ARG"
OTEL_BSP_MAX_QUEUE_SIZE: Final = "OTEL_BSP_MAX_QUEUE_SIZE"
OTEL_BSP_SCHEDULE_DELAY: Final = "OTEL_BSP_SCHEDULE_DELAY"
OTEL_BSP_MAX_EXPORT_BATCH_SIZE: Final = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
OTEL_BSP_EXPORT_TIMEOUT: Final = "OTEL_BSP_EXPORT_TIMEOUT"
OTEL_CAPTURE_MESSAGE_CONTENT: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OTEL_SEMCONV_STABILITY_OPT_IN: Final = "OTEL_SEMCONV_STABILITY_OPT_IN"
#: Token of ``OTEL_SEMCONV_STABILITY_OPT_IN`` selecting the current GenAI set.
GENAI_OPT_IN_LATEST: Final = "gen_ai_latest_experimental"
#: Token selecting both GenAI sets (the ``/dup`` spelling OpenTelemetry uses for the http,
#: database and rpc migrations).
GENAI_OPT_IN_BOTH: Final = "gen_ai_latest_experimental/dup"
#: groundtrace's token selecting the previous GenAI set alone.
GENAI_OPT_IN_PREVIOUS: Final = "gen_ai_previous"

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})

T = TypeVar("T")


def warn_bad(name: str, value: str, expected: str, default: object) -> None:
    """Log the standard warning for an unusable environment value."""
    _logger.warning(
        "groundtrace: ignoring %s=%r (expected %s); using the default %r",
        name,
        value,
        expected,
        default,
    )


def env_str(name: str) -> str | None:
    """The stripped value of ``name``, or None when unset or blank."""
    value = os.environ.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def _parse(name: str, expected: str, default: object, parse: Callable[[str], T | None]) -> T | None:
    raw = env_str(name)
    if raw is None:
        return None
    try:
        parsed = parse(raw)
    except (ValueError, TypeError):
        parsed = None
    if parsed is None:
        warn_bad(name, raw, expected, default)
    return parsed


def _to_bool(raw: str) -> bool | None:
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    return None


def env_bool(name: str, default: object = None) -> bool | None:
    """A boolean variable (true/false/1/0/yes/no/on/off, case-insensitive)."""
    return _parse(name, "true or false", default, _to_bool)


def env_int(name: str, default: object = None, *, minimum: int = 0) -> int | None:
    """An integer variable >= ``minimum``."""

    def parse(raw: str) -> int | None:
        value = int(raw)
        return value if value >= minimum else None

    return _parse(name, f"an integer >= {minimum}", default, parse)


def env_float(
    name: str, default: object = None, *, minimum: float = 0.0, maximum: float | None = None
) -> float | None:
    """A finite float variable within ``[minimum, maximum]``."""

    def parse(raw: str) -> float | None:
        value = float(raw)
        if math.isnan(value) or value < minimum or (maximum is not None and value > maximum):
            return None
        return value

    bounds = f"a number in [{minimum}, {maximum}]" if maximum is not None else f">= {minimum}"
    return _parse(name, bounds, default, parse)


def env_list(name: str) -> list[str] | None:
    """A comma-separated list (items stripped, empty items dropped)."""
    raw = env_str(name)
    if raw is None:
        return None
    return [item.strip() for item in raw.split(",") if item.strip()]


def genai_conventions() -> sc.GenAIConventions:
    """The GenAI attribute set ``OTEL_SEMCONV_STABILITY_OPT_IN`` selects (see
    :class:`~groundtrace.sdk.semconv.GenAIConventions`); ``LATEST`` without a GenAI token."""
    tokens = set(env_list(OTEL_SEMCONV_STABILITY_OPT_IN) or ())
    if GENAI_OPT_IN_BOTH in tokens:
        return sc.GenAIConventions.BOTH
    if GENAI_OPT_IN_LATEST in tokens:
        return sc.GenAIConventions.LATEST
    if GENAI_OPT_IN_PREVIOUS in tokens:
        return sc.GenAIConventions.PREVIOUS
    return sc.GenAIConventions.LATEST
