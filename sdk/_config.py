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
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Final

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    ParentBased,
    Sampler,
    TraceIdRatioBased,
)
from opentelemetry.trace import TracerProvider as APITracerProvider

from . import _env as env
from . import semconv as sc
from ._export_processor import CountingBatchSpanProcessor, ExporterStats
from ._exporters import CONNECTED_EXPORTERS, build_exporter, normalize_exporter_names
from ._fork import run_at_exit
from ._runtime import CONTENT_FIELDS, Settings, install, logger
from .redaction import BUILTIN_MASKERS, Masker, Redactor

__all__ = [
    "DEFAULT_EXPORTER",
    "DEFAULT_FILE_PATH",
    "ExportStats",
    "ExporterStats",
    "configure",
    "export_stats",
    "shutdown",
]

#: Exporter used when neither the argument nor an environment variable names one.
DEFAULT_EXPORTER: Final = "otlp_http"
#: Where the ``file`` exporter writes by default (a directory: ``traces-<pid>.jsonl`` inside).
DEFAULT_FILE_PATH: Final = "groundtrace-traces/"
_DEFAULT_SERVICE: Final = "unknown_service"
_DEFAULTS: Final = Settings()


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


def _resolve_sampler(sample_ratio: float | None) -> Sampler:
    if sample_ratio is not None:
        ratio = float(sample_ratio)
        if not 0.0 <= ratio <= 1.0:
            logger.warning("groundtrace: sample_ratio=%r outside [0, 1]; using 1.0", sample_ratio)
            ratio = 1.0
        return ParentBased(TraceIdRatioBased(ratio))
    ratio_env = env.env_float(env.ENV_SAMPLE_RATIO, 1.0, minimum=0.0, maximum=1.0)
    if ratio_env is not None:
        return ParentBased(TraceIdRatioBased(ratio_env))
    name = env.env_str(env.OTEL_TRACES_SAMPLER)
    if name is None:
        return ParentBased(ALWAYS_ON)
    name = name.lower()
    needs_ratio = name in ("traceidratio", "parentbased_traceidratio")
    ratio = 1.0
    if needs_ratio:
        parsed = env.env_float(env.OTEL_TRACES_SAMPLER_ARG, 1.0, minimum=0.0, maximum=1.0)
        ratio = 1.0 if parsed is None else parsed
    samplers: dict[str, Sampler] = {
        "always_on": ALWAYS_ON,
        "always_off": ALWAYS_OFF,
        "traceidratio": TraceIdRatioBased(ratio),
        "parentbased_always_on": ParentBased(ALWAYS_ON),
        "parentbased_always_off": ParentBased(ALWAYS_OFF),
        "parentbased_traceidratio": ParentBased(TraceIdRatioBased(ratio)),
    }
    sampler = samplers.get(name)
    if sampler is None:
        env.warn_bad(
            env.OTEL_TRACES_SAMPLER, name, "one of " + ", ".join(samplers), "parentbased_always_on"
        )
        return ParentBased(ALWAYS_ON)
    return sampler


def _resolve_capture(capture_content: bool | Iterable[str] | None) -> frozenset[str]:
    if capture_content is None:
        raw = env.env_str(env.ENV_CAPTURE_CONTENT)
        if raw is None:
            flag = env.env_bool(env.OTEL_CAPTURE_MESSAGE_CONTENT, False)
            return CONTENT_FIELDS if flag else frozenset()
        as_bool = raw.lower()
        if as_bool in ("1", "true", "yes", "on", "all"):
            return CONTENT_FIELDS
        if as_bool in ("0", "false", "no", "off", "none"):
            return frozenset()
        capture_content = [item.strip() for item in raw.split(",") if item.strip()]
        source = env.ENV_CAPTURE_CONTENT
    else:
        source = "capture_content"
    if capture_content is True:
        return CONTENT_FIELDS
    if capture_content is False:
        return frozenset()
    fields = {str(f).strip().lower() for f in capture_content}
    unknown = sorted(fields - CONTENT_FIELDS)
    if unknown:
        env.warn_bad(
            source, ",".join(unknown), "fields from " + ",".join(sorted(CONTENT_FIELDS)), "skipped"
        )
    return frozenset(fields & CONTENT_FIELDS)


def _resolve_redactor(
    redact: bool | Iterable[str] | Redactor | None, maskers: Sequence[Masker]
) -> Redactor | None:
    base: Redactor | None
    if isinstance(redact, Redactor):
        base = redact
    else:
        choice: bool | list[str]
        if redact is None:
            raw = env.env_str(env.ENV_REDACT)
            if raw is None or raw.lower() in ("1", "true", "yes", "on", "all"):
                choice = True
            elif raw.lower() in ("0", "false", "no", "off", "none"):
                choice = False
            else:
                choice = [item.strip() for item in raw.split(",") if item.strip()]
            source = env.ENV_REDACT
        else:
            choice = redact if isinstance(redact, bool) else list(redact)
            source = "redact"
        if choice is True:
            base = Redactor.default()
        elif choice is False:
            base = None
        else:
            unknown = [n for n in choice if n not in BUILTIN_MASKERS]
            if unknown:
                env.warn_bad(source, ",".join(unknown), "built-in masker names", "skipped")
            base = Redactor.builtins([n for n in choice if n in BUILTIN_MASKERS])
    if maskers:
        return base.with_maskers(*maskers) if base is not None else Redactor(maskers)
    return base


def _int_setting(value: int | None, variable: str, default: int, minimum: int) -> int:
    if value is not None:
        if value < minimum:
            logger.warning(
                "groundtrace: %s=%r below %d; using %d", variable, value, minimum, default
            )
            return default
        return int(value)
    parsed = env.env_int(variable, default, minimum=minimum)
    return default if parsed is None else parsed


def _resolve_exporters(
    exporter: str | SpanExporter | Sequence[str | SpanExporter] | None,
    tracer_provider: APITracerProvider | None,
) -> list[str | SpanExporter]:
    if exporter is None:
        if tracer_provider is not None:
            return []  # the user's provider already has its exporters
        names = env.env_list(env.ENV_EXPORTER)
        source = env.ENV_EXPORTER
        if names is None:
            names = env.env_list(env.OTEL_TRACES_EXPORTER)
            source = env.OTEL_TRACES_EXPORTER
        if names is None:
            return [DEFAULT_EXPORTER]
        return list(normalize_exporter_names(names, source))
    items: Sequence[str | SpanExporter]
    items = [exporter] if isinstance(exporter, str | SpanExporter) else list(exporter)
    out: list[str | SpanExporter] = []
    names_given = [i for i in items if isinstance(i, str)]
    resolved = normalize_exporter_names(names_given, "exporter")
    out.extend(resolved)
    out.extend(i for i in items if isinstance(i, SpanExporter))
    return out


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

    Args:
        service_name: ``service.name`` resource attribute. Env ``GROUNDTRACE_SERVICE_NAME``,
            ``OTEL_SERVICE_NAME``; default ``"unknown_service"``. ``OTEL_RESOURCE_ATTRIBUTES``
            is honoured as well.
        app_version: ``service.version`` resource attribute. Env ``GROUNDTRACE_APP_VERSION``.
        exporter: a name, an exporter instance, or a list of both. Names: ``"otlp_http"``,
            ``"otlp_grpc"``, ``"otlp"`` (protocol from ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL``),
            ``"file"``, ``"console"``, ``"none"``. Env ``GROUNDTRACE_EXPORTER`` then
            ``OTEL_TRACES_EXPORTER`` (comma lists); default ``"otlp_http"``. With
            ``tracer_provider`` given, no exporter is added unless named here.
        endpoint: OTLP endpoint (HTTP: base URL, ``/v1/traces`` appended when missing; gRPC:
            ``host:port``). Default: the standard ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``
            variables, read by the OpenTelemetry exporters themselves.
        headers: OTLP headers. Default: ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``.
        file_path: file or directory of the ``file`` exporter. Env ``GROUNDTRACE_FILE_PATH``;
            default ``"groundtrace-traces/"`` (-> ``groundtrace-traces/traces-<pid>.jsonl``).
        file_max_bytes: rotate the file above this size, 0 = never. Env
            ``GROUNDTRACE_FILE_MAX_BYTES``; default 0.
        file_backup_count: rotated files kept. Env ``GROUNDTRACE_FILE_BACKUP_COUNT``; default 5.
        sample_ratio: fraction of new traces recorded, parent-based (a child follows its
            parent's decision). Env ``GROUNDTRACE_SAMPLE_RATIO``, else ``OTEL_TRACES_SAMPLER`` /
            ``OTEL_TRACES_SAMPLER_ARG``; default: record everything (``parentbased_always_on``).
        capture_content: ``True`` (all text fields), ``False`` (none: evidence is still
            recorded by reference -- id, version, hash, length; docs/privacy.md lists what
            is exported) or a set of fields from
            ``query, evidence, answer, messages, tool_arguments, tool_results, io``. Env
            ``GROUNDTRACE_CAPTURE_CONTENT`` (``true``/``false``/comma list), else
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``; default ``False``, as in
            the OpenTelemetry GenAI conventions.
        max_attribute_length: longer strings are truncated (listed in
            ``groundtrace.truncated``). Env ``GROUNDTRACE_MAX_ATTRIBUTE_LENGTH``; default 32768.
        max_evidence_items: evidence lists are cut to this many items. Env
            ``GROUNDTRACE_MAX_EVIDENCE_ITEMS``; default 100.
        redact: ``True`` (all built-in maskers), ``False`` (no redaction), a list of built-in
            masker names, or a :class:`~groundtrace.sdk.redaction.Redactor`. Env
            ``GROUNDTRACE_REDACT`` (``true``/``false``/comma list); default ``True``: captured
            text is masked before it leaves the process unless redaction is switched off.
        maskers: custom maskers, tried before the built-ins.
        enabled: master switch; ``False`` makes decorators call straight through with no span
            work and installs no exporter. Env ``GROUNDTRACE_ENABLED`` (and
            ``OTEL_SDK_DISABLED=true`` disables too); default ``True``.
        propagate_threads: carry the trace context into thread-pool work started inside a
            traced step. Env ``GROUNDTRACE_PROPAGATE_THREADS``; default ``True``.
        tracer_provider: use this provider (yours) instead of creating one. ``shutdown()``
            then shuts down only the exporters groundtrace added to it.
        set_global: also make the provider the global OpenTelemetry provider (default
            ``False``: library code never touches the global provider unless asked).
        resource_attributes: extra resource attributes.
        max_queue_size: spans buffered per exporter; more are dropped and counted. Env
            ``GROUNDTRACE_MAX_QUEUE_SIZE``, else ``OTEL_BSP_MAX_QUEUE_SIZE``; default 2048.
            ``OTEL_BSP_SCHEDULE_DELAY`` (ms, default 5000) and
            ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` (default 512) are honoured too.
        shutdown_timeout: seconds :func:`shutdown` waits for queued spans per exporter; what
            is left is counted as dropped. Env ``GROUNDTRACE_SHUTDOWN_TIMEOUT``; default 5.

    Returns:
        The tracer provider groundtrace uses (``None`` when disabled).
    """
    try:
        return _configure(**locals())
    except Exception:
        logger.warning("groundtrace: configure() failed; tracing is disabled", exc_info=True)
        install(replace(_DEFAULTS, enabled=False), None)
        return None


def _configure(
    *,
    service_name: str | None,
    app_version: str | None,
    exporter: str | SpanExporter | Sequence[str | SpanExporter] | None,
    endpoint: str | None,
    headers: Mapping[str, str] | None,
    file_path: str | os.PathLike[str] | None,
    file_max_bytes: int | None,
    file_backup_count: int | None,
    sample_ratio: float | None,
    capture_content: bool | Iterable[str] | None,
    max_attribute_length: int | None,
    max_evidence_items: int | None,
    redact: bool | Iterable[str] | Redactor | None,
    maskers: Sequence[Masker],
    enabled: bool | None,
    propagate_threads: bool | None,
    tracer_provider: APITracerProvider | None,
    set_global: bool,
    resource_attributes: Mapping[str, str | bool | int | float] | None,
    max_queue_size: int | None,
    shutdown_timeout: float | None,
) -> APITracerProvider | None:
    global _LAST_STATS
    with _LOCK:
        shutdown()
        _LAST_STATS = ()
        if enabled is None:
            enabled_env = env.env_bool(env.ENV_ENABLED, True)
            otel_disabled = env.env_bool(env.OTEL_SDK_DISABLED, False)
            enabled = (enabled_env is not False) and not otel_disabled
        if propagate_threads is None:
            propagate_threads = env.env_bool(env.ENV_PROPAGATE_THREADS, True) is not False
        new_settings = Settings(
            enabled=enabled,
            capture=_resolve_capture(capture_content),
            max_attribute_length=_int_setting(
                max_attribute_length,
                env.ENV_MAX_ATTRIBUTE_LENGTH,
                _DEFAULTS.max_attribute_length,
                1,
            ),
            max_evidence_items=_int_setting(
                max_evidence_items, env.ENV_MAX_EVIDENCE_ITEMS, _DEFAULTS.max_evidence_items, 0
            ),
            redact=_resolve_redactor(redact, maskers),
            propagate_threads=propagate_threads,
        )
        if not enabled:
            install(new_settings, None)
            return None

        timeout_s = shutdown_timeout
        if timeout_s is None:
            timeout_s = env.env_float(env.ENV_SHUTDOWN_TIMEOUT, 5.0, minimum=0.0)
        _OWNED.shutdown_timeout_ms = int(1000 * (5.0 if timeout_s is None else timeout_s))

        provider: APITracerProvider
        if tracer_provider is not None:
            provider = tracer_provider
            _OWNED.provider_is_ours = False
        else:
            attributes: dict[str, str | bool | int | float] = dict(resource_attributes or {})
            name = (
                service_name
                or env.env_str(env.ENV_SERVICE_NAME)
                or env.env_str(env.OTEL_SERVICE_NAME)
            )
            version = app_version or env.env_str(env.ENV_APP_VERSION)
            if name:
                attributes[sc.SERVICE_NAME] = name
            if version:
                attributes[sc.SERVICE_VERSION] = version
            resource = Resource.create(attributes)
            if sc.SERVICE_NAME not in resource.attributes:
                resource = resource.merge(Resource({sc.SERVICE_NAME: _DEFAULT_SERVICE}))
            provider = TracerProvider(resource=resource, sampler=_resolve_sampler(sample_ratio))
            _OWNED.provider_is_ours = True
        _OWNED.provider = provider if isinstance(provider, TracerProvider) else None

        queue = _int_setting(max_queue_size, env.ENV_MAX_QUEUE_SIZE, -1, 1)
        if queue < 1:
            queue = env.env_int(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048, minimum=1) or 2048
        batch = env.env_int(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512, minimum=1) or 512
        delay = env.env_int(env.OTEL_BSP_SCHEDULE_DELAY, 5000, minimum=0)
        delay = 5000 if delay is None else delay

        path = file_path or env.env_str(env.ENV_FILE_PATH) or DEFAULT_FILE_PATH
        max_bytes = _int_setting(file_max_bytes, env.ENV_FILE_MAX_BYTES, 0, 0)
        backups = _int_setting(file_backup_count, env.ENV_FILE_BACKUP_COUNT, 5, 0)
        for item in _resolve_exporters(exporter, tracer_provider):
            rebuild: Callable[[], SpanExporter | None] | None = None
            if isinstance(item, str):
                build = partial(
                    build_exporter,
                    item,
                    endpoint=endpoint,
                    headers=headers,
                    file_path=path,
                    file_max_bytes=max_bytes,
                    file_backup_count=backups,
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
                max_queue_size=queue,
                max_export_batch_size=batch,
                schedule_delay_millis=delay,
                rebuild_after_fork=rebuild,
            )
            provider.add_span_processor(processor)
            _OWNED.processors.append(processor)

        if set_global:
            trace.set_tracer_provider(provider)
        install(new_settings, provider)
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
