"""``configure()`` / ``shutdown()`` / ``export_stats()``: set the SDK up once, at application start.

Usage::

    from groundtrace.sdk import configure, export_stats, shutdown

    configure(service_name="hotpot-rag", app_version="2026.11.1", exporter=["file", "otlp_http"],
              file_path="traces/", capture_content=True)
    ...
    shutdown()  # flush, fsync and close; warns if spans were lost

Every argument left as ``None`` is read from the environment, else takes the documented default
(precedence: argument > ``GROUNDTRACE_*`` > ``OTEL_*`` > default). A bad environment value logs
a warning naming the variable and falls back to the default; ``configure()`` never raises into
the application.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from textwrap import indent
from typing import Final

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
from opentelemetry.trace import TracerProvider as APITracerProvider

from . import semconv as sc
from ._export_processor import CountingBatchSpanProcessor, ExporterStats
from ._exporters import CONNECTED_EXPORTERS, build_exporter
from ._fork import run_at_exit
from ._runtime import install, logger
from ._settings import DEFAULT_EXPORTER, DEFAULT_FILE_PATH, Settings, arguments_doc
from .redaction import Masker, Redactor

__all__ = [
    "DEFAULT_EXPORTER",
    "DEFAULT_FILE_PATH",
    "ExportStats",
    "ExporterStats",
    "configure",
    "export_stats",
    "shutdown",
]

_DEFAULT_SERVICE: Final = "unknown_service"


@dataclass(frozen=True, slots=True)
class ExportStats:
    """Span accounting of the exporters installed by the last :func:`configure`.

    Per exporter, every sampled span that ended is counted exactly once, in ``exported``,
    ``failed``, ``dropped`` or ``queued`` (0 after :func:`shutdown`); the counts here are
    summed over the exporters (a span sent to two exporters counts twice).

    Attributes:
        exported: spans accepted by the exporters.
        failed: spans handed to an exporter that rejected them, raised, or was still exporting
            them when the shutdown timeout expired.
        dropped: spans never handed to an exporter (queue full, after shutdown, or still
            queued when the shutdown timeout expired).
        queued: spans waiting to be exported or being exported right now.
        exporters: the same counts per exporter.
    """

    exported: int = 0
    failed: int = 0
    dropped: int = 0
    queued: int = 0
    exporters: tuple[ExporterStats, ...] = field(default_factory=tuple)

    @property
    def lost(self) -> int:
        """Spans that did not reach a backend: ``failed + dropped``."""
        return self.failed + self.dropped


class _Owned:
    """What the current configuration created and must flush/close."""

    __slots__ = ("processors", "provider", "provider_is_ours", "shutdown_timeout_ms")

    def __init__(self) -> None:
        self.provider: TracerProvider | None = None
        self.provider_is_ours = False
        self.processors: list[CountingBatchSpanProcessor] = []
        self.shutdown_timeout_ms = 5000


_LOCK = threading.RLock()  # made anew in a forked child: another thread may hold it at the fork
_OWNED = _Owned()
_LAST_STATS: tuple[ExporterStats, ...] = ()


def configure(
    *,
    service_name: str | None = None,
    app_version: str | None = None,
    exporter: str | SpanExporter | Sequence[str | SpanExporter] | None = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    file_path: str | os.PathLike[str] | None = None,
    file_max_bytes: int | None = None,
    file_backup_count: int | None = None,
    sample_ratio: float | None = None,
    capture_content: bool | Iterable[str] | None = None,
    max_attribute_length: int | None = None,
    max_evidence_items: int | None = None,
    redact: bool | Iterable[str] | Redactor | None = None,
    maskers: Sequence[Masker] = (),
    enabled: bool | None = None,
    propagate_threads: bool | None = None,
    tracer_provider: APITracerProvider | None = None,
    set_global: bool = False,
    resource_attributes: Mapping[str, str | bool | int | float] | None = None,
    max_queue_size: int | None = None,
    shutdown_timeout: float | None = None,
) -> APITracerProvider | None:
    """Configure groundtrace: settings, tracer provider, exporters. Safe to call again.

    Calling ``configure()`` again first shuts down (flushes) what the previous call created.

    Every keyword left as ``None`` is read from the environment, else takes its default; each
    one sets the field of :class:`~groundtrace.sdk.Settings` of the same name (``sample_ratio``
    sets ``sampler``, ``capture_content`` ``capture``; ``maskers`` joins ``redact``), where
    its variables, default and meaning are documented once (``Settings.options()``).

    {arguments}

    Returns:
        The tracer provider groundtrace uses (``None`` when disabled).
    """
    try:
        return _configure(settings=Settings.from_env(**locals()))
    except Exception:
        logger.warning("groundtrace: configure() failed; tracing is disabled", exc_info=True)
        install(Settings(enabled=False), None)
        return None


if configure.__doc__:  # None under python -OO
    configure.__doc__ = configure.__doc__.replace(
        "    {arguments}", indent(arguments_doc(), "    ")
    )


def _resource(settings: Settings) -> Resource:
    attributes: dict[str, str | bool | int | float] = dict(settings.resource_attributes or {})
    if settings.service_name:
        attributes[sc.SERVICE_NAME] = settings.service_name
    if settings.app_version:
        attributes[sc.SERVICE_VERSION] = settings.app_version
    resource = Resource.create(attributes)
    if sc.SERVICE_NAME not in resource.attributes:
        resource = resource.merge(Resource({sc.SERVICE_NAME: _DEFAULT_SERVICE}))
    return resource


def _configure(*, settings: Settings) -> APITracerProvider | None:
    global _LAST_STATS
    with _LOCK:
        shutdown()
        _LAST_STATS = ()
        if not settings.enabled:
            install(settings, None)
            return None
        _OWNED.shutdown_timeout_ms = int(1000 * settings.shutdown_timeout)

        provider: APITracerProvider
        if settings.tracer_provider is not None:
            provider = settings.tracer_provider
            _OWNED.provider_is_ours = False
        else:
            sampler = settings.sampler or ParentBased(ALWAYS_ON)
            provider = TracerProvider(resource=_resource(settings), sampler=sampler)
            _OWNED.provider_is_ours = True
        _OWNED.provider = provider if isinstance(provider, TracerProvider) else None

        for item in settings.exporter:
            rebuild: Callable[[], SpanExporter | None] | None = None
            if isinstance(item, str):
                build = partial(
                    build_exporter,
                    item,
                    endpoint=settings.endpoint,
                    headers=settings.headers,
                    file_path=settings.file_path,
                    file_max_bytes=settings.file_max_bytes,
                    file_backup_count=settings.file_backup_count,
                )
                built = build()
                label = item
                rebuild = build if item in CONNECTED_EXPORTERS else None
            else:
                built = item
                label = type(item).__name__
            if built is None:
                continue
            if not hasattr(provider, "add_span_processor"):
                logger.warning(
                    "groundtrace: %s cannot take span processors; exporter %s not added",
                    type(provider).__name__,
                    label,
                )
                continue
            processor = CountingBatchSpanProcessor(
                built,
                name=label,
                max_queue_size=settings.max_queue_size,
                max_export_batch_size=settings.max_export_batch_size,
                schedule_delay_millis=settings.schedule_delay_ms,
                rebuild_after_fork=rebuild,
            )
            provider.add_span_processor(processor)
            _OWNED.processors.append(processor)

        if settings.set_global:
            trace.set_tracer_provider(provider)
        install(settings, provider)
        run_at_exit(shutdown)  # also at the end of forked and multiprocessing children
        return provider


def _new_lock_after_fork() -> None:
    global _LOCK
    _LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def export_stats() -> ExportStats:
    """Exported / failed / dropped / queued span counts of the current configuration."""
    with _LOCK:
        per = tuple(p.stats() for p in _OWNED.processors) or _LAST_STATS
    return ExportStats(
        exported=sum(s.exported for s in per),
        failed=sum(s.failed for s in per),
        dropped=sum(s.dropped for s in per),
        queued=sum(s.queued for s in per),
        exporters=per,
    )


def shutdown() -> None:
    """Flush and close everything :func:`configure` created; warn if spans were lost.

    After ``shutdown()`` the SDK keeps running with its settings but without exporters (a
    provider groundtrace created is shut down; a user's provider is left running). The final
    counts stay available from :func:`export_stats` until the next :func:`configure`.
    """
    global _LAST_STATS
    with _LOCK:
        processors = list(_OWNED.processors)
        provider = _OWNED.provider
        ours = _OWNED.provider_is_ours
        timeout = _OWNED.shutdown_timeout_ms
        if not processors and provider is None:
            return
        for processor in processors:
            try:
                processor.shutdown(timeout)  # exports what fits in the timeout, then fsyncs
            except Exception:
                logger.debug("shutting down exporter %s failed", processor.name, exc_info=True)
        if ours and provider is not None:
            try:
                provider.shutdown()
            except Exception:
                logger.debug("tracer provider shutdown failed", exc_info=True)
        _LAST_STATS = tuple(p.stats() for p in processors)
        _OWNED.processors = []
        _OWNED.provider = None
        _OWNED.provider_is_ours = False
        lost = [s for s in _LAST_STATS if s.lost]
        for stats in lost:
            logger.warning(
                "groundtrace: exporter %s lost %d span(s) of %d ended: %d dropped (never "
                "handed to it: queue full or shut down), %d failed (rejected, raised or "
                "unanswered at the shutdown deadline); %d exported",
                stats.name,
                stats.lost,
                stats.lost + stats.exported,
                stats.dropped,
                stats.failed,
                stats.exported,
            )
