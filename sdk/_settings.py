"""The SDK's settings as one typed record: every field with its environment variables, default and
meaning in one place.

:class:`Settings` is frozen; ``configure()`` builds one with :meth:`Settings.from_env` (precedence:
``configure()`` keyword > ``GROUNDTRACE_*`` > ``OTEL_*`` > default) and installs it, and every span
reads the one in force. Whether a kind of content is recorded is decided in one place,
:meth:`Settings.captures`, with the kinds named by :class:`Content`. A bad environment value logs a
warning naming the variable and the default used instead; reading the settings never raises for a
bad value.
"""

from __future__ import annotations

import logging
import os
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from . import _env as env
from . import semconv as sc

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.sampling import Sampler
    from opentelemetry.trace import TracerProvider as APITracerProvider

    from .redaction import Masker, Redactor

__all__ = ["CONTENT_FIELDS", "Content", "Option", "Settings"]


class Content(StrEnum):
    """The kinds of application text whose capture is switched on and off one by one
    (``configure(capture_content=...)``); docs/privacy.md lists what each one records."""

    QUERY = "query"
    EVIDENCE = "evidence"
    ANSWER = "answer"
    MESSAGES = "messages"
    TOOL_ARGUMENTS = "tool_arguments"
    TOOL_RESULTS = "tool_results"
    IO = "io"
    #: the message and stack trace of an exception a step or a call raised (its type is
    #: always recorded); they can hold any value the failing code had at hand
    EXCEPTIONS = "exceptions"


#: Every content kind (``capture_content=True``).
CONTENT_FIELDS: Final = frozenset(Content)
_BY_NAME: Final = {kind.value: kind for kind in Content}
_ON: Final = frozenset({"1", "true", "yes", "on", "all"})
_OFF: Final = frozenset({"0", "false", "no", "off", "none"})
#: Exporter used when neither the argument nor an environment variable names one.
DEFAULT_EXPORTER: Final = "otlp_http"
#: Where the ``file`` exporter writes by default (a directory: ``traces-<pid>.jsonl`` inside).
DEFAULT_FILE_PATH: Final = "groundtrace-traces/"

#: Reads one field: (the ``configure()`` keyword's value or None, all keywords) -> the value.
Reader = Callable[[Any, Mapping[str, Any]], Any]
_OPTION: Final = "groundtrace_option"
_logger: Final = logging.getLogger("groundtrace.sdk")


@dataclass(frozen=True, slots=True)
class Option:
    """One field of :class:`Settings` as documented.

    Attributes:
        name: the field.
        argument: the ``configure()`` keyword that sets it (None: environment only).
        env: the environment variables read when the keyword is not given, first wins.
        default: the value used when neither gives one, as documented.
        doc: what the field does.
    """

    name: str
    argument: str | None
    env: tuple[str, ...]
    default: str
    doc: str


def _option(
    *,
    doc: str,
    read: Reader,
    env: tuple[str, ...] = (),
    argument: str | None = "",
    shown: str | None = None,
) -> dict[str, object]:
    """The metadata of a :class:`Settings` field: its documentation and its reader
    (``argument=""``: the keyword is the field's name)."""
    return {_OPTION: {"doc": doc, "read": read, "env": env, "argument": argument, "shown": shown}}


# -- readers: (the keyword's value, all keywords) -> the field's value -------------------------


def _given_or(variable: str) -> Reader:
    """A string: the keyword if truthy, else the variable, else None."""
    return lambda given, _: given or env.env_str(variable)


def _int_setting(value: int | None, variable: str, default: int, minimum: int) -> int:
    if value is not None:
        if value < minimum:
            _logger.warning(
                "groundtrace: %s=%r below %d; using %d", variable, value, minimum, default
            )
            return default
        return int(value)
    parsed = env.env_int(variable, default, minimum=minimum)
    return default if parsed is None else parsed


def _int_reader(variable: str, default: int, minimum: int) -> Reader:
    return lambda given, _: _int_setting(given, variable, default, minimum)


def _read_enabled(given: bool | None, _: Mapping[str, Any]) -> bool:
    if given is not None:
        return given
    enabled_env = env.env_bool(env.ENV_ENABLED, True)
    otel_disabled = env.env_bool(env.OTEL_SDK_DISABLED, False)
    return (enabled_env is not False) and not otel_disabled


def _read_flag(variable: str, default: bool) -> Reader:
    def read(given: bool | None, _: Mapping[str, Any]) -> bool:
        if given is not None:
            return given
        parsed = env.env_bool(variable, default)
        return default if parsed is None else parsed

    return read


def _read_exporter(
    given: str | SpanExporter | Sequence[str | SpanExporter] | None, every: Mapping[str, Any]
) -> tuple[str | SpanExporter, ...]:
    from opentelemetry.sdk.trace.export import SpanExporter

    from ._exporters import normalize_exporter_names

    if given is None:
        if every.get("tracer_provider") is not None:
            return ()  # the user's provider already has its exporters
        names = env.env_list(env.ENV_EXPORTER)
        source = env.ENV_EXPORTER
        if names is None:
            names = env.env_list(env.OTEL_TRACES_EXPORTER)
            source = env.OTEL_TRACES_EXPORTER
        if names is None:
            return (DEFAULT_EXPORTER,)
        return tuple(normalize_exporter_names(names, source))
    items = [given] if isinstance(given, str | SpanExporter) else list(given)
    named = normalize_exporter_names([i for i in items if isinstance(i, str)], "exporter")
    return (*named, *(i for i in items if isinstance(i, SpanExporter)))


def _read_sampler(sample_ratio: float | None, _: Mapping[str, Any]) -> Sampler | None:
    from opentelemetry.sdk.trace.sampling import (
        ALWAYS_OFF,
        ALWAYS_ON,
        ParentBased,
        TraceIdRatioBased,
    )

    if sample_ratio is not None:
        ratio = float(sample_ratio)
        if not 0.0 <= ratio <= 1.0:
            _logger.warning("groundtrace: sample_ratio=%r outside [0, 1]; using 1.0", sample_ratio)
            ratio = 1.0
        return ParentBased(TraceIdRatioBased(ratio))
    ratio_env = env.env_float(env.ENV_SAMPLE_RATIO, 1.0, minimum=0.0, maximum=1.0)
    if ratio_env is not None:
        return ParentBased(TraceIdRatioBased(ratio_env))
    name = env.env_str(env.OTEL_TRACES_SAMPLER)
    if name is None:
        return None
    name = name.lower()
    ratio = 1.0
    if name in ("traceidratio", "parentbased_traceidratio"):
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
        return None
    return sampler


def _read_capture(
    capture_content: bool | Iterable[str] | None, _: Mapping[str, Any]
) -> frozenset[Content]:
    source = "capture_content"
    if capture_content is None:
        raw = env.env_str(env.ENV_CAPTURE_CONTENT)
        if raw is None:
            flag = env.env_bool(env.OTEL_CAPTURE_MESSAGE_CONTENT, False)
            return CONTENT_FIELDS if flag else frozenset()
        if raw.lower() in _ON:
            return CONTENT_FIELDS
        if raw.lower() in _OFF:
            return frozenset()
        capture_content = [item.strip() for item in raw.split(",") if item.strip()]
        source = env.ENV_CAPTURE_CONTENT
    if capture_content is True:
        return CONTENT_FIELDS
    if capture_content is False:
        return frozenset()
    names = {str(f).strip().lower() for f in capture_content}
    unknown = sorted(names - _BY_NAME.keys())
    if unknown:
        env.warn_bad(
            source, ",".join(unknown), "fields from " + ",".join(sorted(_BY_NAME)), "skipped"
        )
    return frozenset(_BY_NAME[n] for n in names if n in _BY_NAME)


def _read_redact(
    redact: bool | Iterable[str] | Redactor | None, every: Mapping[str, Any]
) -> Redactor | None:
    from .redaction import BUILTIN_MASKERS, Redactor

    maskers: Sequence[Masker] = every.get("maskers") or ()
    base: Redactor | None
    if isinstance(redact, Redactor):
        base = redact
    else:
        choice: bool | list[str]
        if redact is None:
            raw = env.env_str(env.ENV_REDACT)
            if raw is None or raw.lower() in _ON:
                choice = True
            elif raw.lower() in _OFF:
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


def _read_max_queue_size(given: int | None, _: Mapping[str, Any]) -> int:
    queue = _int_setting(given, env.ENV_MAX_QUEUE_SIZE, -1, 1)
    if queue < 1:
        queue = env.env_int(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048, minimum=1) or 2048
    return queue


def _read_env_int(variable: str, default: int, minimum: int) -> Reader:
    def read(_given: None, _every: Mapping[str, Any]) -> int:
        parsed = env.env_int(variable, default, minimum=minimum)
        return default if parsed is None else parsed

    return read


def _read_shutdown_timeout(given: float | None, _: Mapping[str, Any]) -> float:
    if given is not None:
        return given
    parsed = env.env_float(env.ENV_SHUTDOWN_TIMEOUT, 5.0, minimum=0.0)
    return 5.0 if parsed is None else parsed


def _as_given(given: Any, _: Mapping[str, Any]) -> Any:
    return given


def _given_or_default(default: Any) -> Reader:
    return lambda given, _: default if given is None else given


@dataclass(frozen=True, slots=True)
class Settings:
    """The SDK's settings, replaced as a whole by ``configure()``.

    Each field documents its ``configure()`` keyword, environment variables and default;
    :meth:`options` lists them. ``Settings()`` as such holds the settings of an SDK that was
    never configured: the documented defaults, but no redaction (nothing is captured either).
    """

    enabled: bool = field(
        default=True,
        metadata=_option(
            env=(env.ENV_ENABLED, env.OTEL_SDK_DISABLED),
            read=_read_enabled,
            doc="master switch; ``False`` makes decorators call straight through with no span "
            "work and installs no exporter (``OTEL_SDK_DISABLED=true`` disables too).",
        ),
    )
    service_name: str | None = field(
        default=None,
        metadata=_option(
            env=(env.ENV_SERVICE_NAME, env.OTEL_SERVICE_NAME),
            read=lambda given, _: (
                given or env.env_str(env.ENV_SERVICE_NAME) or env.env_str(env.OTEL_SERVICE_NAME)
            ),
            shown='"unknown_service"',
            doc="``service.name`` resource attribute. ``OTEL_RESOURCE_ATTRIBUTES`` is honoured "
            "as well.",
        ),
    )
    app_version: str | None = field(
        default=None,
        metadata=_option(
            env=(env.ENV_APP_VERSION,),
            read=_given_or(env.ENV_APP_VERSION),
            doc="``service.version`` resource attribute.",
        ),
    )
    exporter: tuple[str | SpanExporter, ...] = field(
        default=(DEFAULT_EXPORTER,),
        metadata=_option(
            env=(env.ENV_EXPORTER, env.OTEL_TRACES_EXPORTER),
            read=_read_exporter,
            doc='a name, an exporter instance, or a list of both. Names: ``"otlp_http"``, '
            '``"otlp_grpc"``, ``"otlp"`` (protocol from ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL``), '
            '``"file"``, ``"console"``, ``"none"``; the variables hold comma lists. With '
            "``tracer_provider`` given, no exporter is added unless named here.",
        ),
    )
    endpoint: str | None = field(
        default=None,
        metadata=_option(
            read=_as_given,
            shown="``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, read by the OpenTelemetry exporters",
            doc="OTLP endpoint (HTTP: base URL, ``/v1/traces`` appended when missing; gRPC: "
            "``host:port``).",
        ),
    )
    headers: Mapping[str, str] | None = field(
        default=None,
        metadata=_option(
            read=_as_given,
            shown="``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``, read by the OpenTelemetry exporters",
            doc="OTLP headers.",
        ),
    )
    file_path: str | os.PathLike[str] = field(
        default=DEFAULT_FILE_PATH,
        metadata=_option(
            env=(env.ENV_FILE_PATH,),
            read=lambda given, _: given or env.env_str(env.ENV_FILE_PATH) or DEFAULT_FILE_PATH,
            doc="file or directory of the ``file`` exporter (a directory gets "
            "``traces-<pid>.jsonl``).",
        ),
    )
    file_max_bytes: int = field(
        default=0,
        metadata=_option(
            env=(env.ENV_FILE_MAX_BYTES,),
            read=_int_reader(env.ENV_FILE_MAX_BYTES, 0, 0),
            doc="rotate the file above this size, 0 = never.",
        ),
    )
    file_backup_count: int = field(
        default=5,
        metadata=_option(
            env=(env.ENV_FILE_BACKUP_COUNT,),
            read=_int_reader(env.ENV_FILE_BACKUP_COUNT, 5, 0),
            doc="rotated files kept.",
        ),
    )
    sampler: Sampler | None = field(
        default=None,
        metadata=_option(
            argument="sample_ratio",
            env=(env.ENV_SAMPLE_RATIO, env.OTEL_TRACES_SAMPLER, env.OTEL_TRACES_SAMPLER_ARG),
            read=_read_sampler,
            shown="record everything (``parentbased_always_on``)",
            doc="fraction of new traces recorded, parent-based (a child follows its parent's "
            "decision); the field holds the sampler (``None``: ``parentbased_always_on``).",
        ),
    )
    capture: frozenset[Content] = field(
        default=frozenset(),
        metadata=_option(
            argument="capture_content",
            env=(env.ENV_CAPTURE_CONTENT, env.OTEL_CAPTURE_MESSAGE_CONTENT),
            read=_read_capture,
            shown="``False``, as in the OpenTelemetry GenAI conventions",
            doc="``True`` (all text fields), ``False`` (none: evidence is still recorded by "
            "reference -- id, version, hash, length; docs/privacy.md lists what is exported) or a "
            "set of fields from ``query, evidence, answer, messages, tool_arguments, "
            "tool_results, io, exceptions`` (:class:`Content`; ``exceptions``: the messages and "
            "stack traces of exceptions, always masked); ``GROUNDTRACE_CAPTURE_CONTENT`` takes "
            "``true``/``false``/a comma list.",
        ),
    )
    max_attribute_length: int = field(
        default=32_768,
        metadata=_option(
            env=(env.ENV_MAX_ATTRIBUTE_LENGTH,),
            read=_int_reader(env.ENV_MAX_ATTRIBUTE_LENGTH, 32_768, 1),
            doc="longer strings are truncated (listed in ``groundtrace.truncated``).",
        ),
    )
    max_evidence_items: int = field(
        default=100,
        metadata=_option(
            env=(env.ENV_MAX_EVIDENCE_ITEMS,),
            read=_int_reader(env.ENV_MAX_EVIDENCE_ITEMS, 100, 0),
            doc="evidence lists are cut to this many items.",
        ),
    )
    redact: Callable[[str], tuple[str, tuple[str, ...]]] | None = field(
        default=None,
        metadata=_option(
            env=(env.ENV_REDACT,),
            read=_read_redact,
            shown="``True``: captured text is masked before it leaves the process",
            doc="``True`` (all built-in maskers), ``False`` (no redaction), a list of built-in "
            "masker names, or a :class:`~groundtrace.sdk.redaction.Redactor`; the ``maskers`` "
            "keyword adds custom maskers, tried before the built-ins. The variable takes "
            "``true``/``false``/a comma list. The field holds the resolved masker.",
        ),
    )
    propagate_threads: bool = field(
        default=True,
        metadata=_option(
            env=(env.ENV_PROPAGATE_THREADS,),
            read=_read_flag(env.ENV_PROPAGATE_THREADS, True),
            doc="carry the trace context into thread-pool work started inside a traced step.",
        ),
    )
    tracer_provider: APITracerProvider | None = field(
        default=None,
        metadata=_option(
            read=_as_given,
            doc="use this provider (yours) instead of creating one; ``shutdown()`` then shuts "
            "down only the exporters groundtrace added to it.",
        ),
    )
    set_global: bool = field(
        default=False,
        metadata=_option(
            read=_given_or_default(False),
            doc="also make the provider the global OpenTelemetry provider (library code never "
            "touches the global provider unless asked).",
        ),
    )
    resource_attributes: Mapping[str, str | bool | int | float] | None = field(
        default=None,
        metadata=_option(
            read=_as_given,
            doc="extra resource attributes.",
        ),
    )
    max_queue_size: int = field(
        default=2048,
        metadata=_option(
            env=(env.ENV_MAX_QUEUE_SIZE, env.OTEL_BSP_MAX_QUEUE_SIZE),
            read=_read_max_queue_size,
            doc="spans buffered per exporter; more are dropped and counted.",
        ),
    )
    max_export_batch_size: int = field(
        default=512,
        metadata=_option(
            argument=None,
            env=(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,),
            read=_read_env_int(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512, 1),
            doc="spans per export call.",
        ),
    )
    schedule_delay_ms: int = field(
        default=5000,
        metadata=_option(
            argument=None,
            env=(env.OTEL_BSP_SCHEDULE_DELAY,),
            read=_read_env_int(env.OTEL_BSP_SCHEDULE_DELAY, 5000, 0),
            doc="milliseconds between two exports of a queue.",
        ),
    )
    shutdown_timeout: float = field(
        default=5.0,
        metadata=_option(
            env=(env.ENV_SHUTDOWN_TIMEOUT,),
            read=_read_shutdown_timeout,
            doc="seconds ``shutdown()`` waits for queued spans per exporter; what is left is "
            "counted as dropped.",
        ),
    )
    genai: sc.GenAIConventions = field(
        default_factory=env.genai_conventions,
        metadata=_option(
            argument=None,
            env=(env.OTEL_SEMCONV_STABILITY_OPT_IN,),
            read=lambda _given, _every: env.genai_conventions(),
            shown="the current set",
            doc="the OpenTelemetry GenAI attribute set written (see "
            ":class:`~groundtrace.sdk.semconv.GenAIConventions`): "
            f"``{env.GENAI_OPT_IN_BOTH}`` both, ``{env.GENAI_OPT_IN_PREVIOUS}`` the previous one.",
        ),
    )
    genai_latest: bool = field(init=False, repr=False, compare=False)
    genai_previous: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        genai = self.genai
        object.__setattr__(self, "genai_latest", genai is not sc.GenAIConventions.PREVIOUS)
        object.__setattr__(self, "genai_previous", genai is not sc.GenAIConventions.LATEST)

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """The settings from these ``configure()`` keywords, else the environment, else the
        defaults (a keyword given as ``None`` counts as not given). An unknown keyword raises
        ``TypeError``; a bad environment value warns and falls back to the default."""
        unknown = sorted(set(overrides) - _KEYWORDS)
        if unknown:
            raise TypeError(f"unknown settings keyword(s): {', '.join(unknown)}")
        values = {}
        for name, argument, read in _READERS:
            values[name] = read(overrides.get(argument) if argument else None, overrides)
        return cls(**values)

    @classmethod
    def options(cls) -> tuple[Option, ...]:
        """Every field with its keyword, environment variables, default and meaning."""
        return tuple(_describe(f) for f in fields(cls) if _OPTION in f.metadata)

    @property
    def scope_schema_url(self) -> str:
        """Schema URL of the instrumentation scope: that of the GenAI set written (the
        current one when both are)."""
        return sc.GENAI_SCHEMA_URL if self.genai_latest else sc.GENAI_PREVIOUS_SCHEMA_URL

    def captures(self, kind: Content | str) -> bool:
        """Whether content of ``kind`` is recorded: the one place the SDK decides whether
        application text goes on a span (callers bind the member to a module constant: an
        enum member's lookup costs more than this call)."""
        return kind in self.capture


def _describe(f: Field[Any]) -> Option:
    spec = f.metadata[_OPTION]
    argument = f.name if spec["argument"] == "" else spec["argument"]
    if spec["shown"] is not None:
        default = spec["shown"]
    elif f.default is MISSING:
        default = "see below"
    else:
        value = f.default
        default = f"``{value[0]!r}``" if isinstance(value, tuple) and value else f"``{value!r}``"
    return Option(f.name, argument, tuple(spec["env"]), default, spec["doc"])


_READERS: Final = tuple(
    (o.name, o.argument, f.metadata[_OPTION]["read"])
    for f, o in ((f, _describe(f)) for f in fields(Settings) if _OPTION in f.metadata)
)
#: ``configure()`` keywords: one per field that has one, plus ``maskers`` (folded into
#: ``redact``).
_KEYWORDS: Final = frozenset({a for _, a, _ in _READERS if a} | {"maskers"})


def arguments_doc() -> str:
    """The ``Args:`` section of ``configure()``'s docstring, written from :class:`Settings`."""
    only_env = [o for o in Settings.options() if o.argument is None]
    lines = [
        textwrap.fill(
            "Read from the environment only: "
            + "; ".join(
                f"``{o.env[0]}``: {o.doc.rstrip('.')}, default {o.default}" for o in only_env
            )
            + ".",
            92,
        ),
        "",
        "Args:",
    ]
    for option in Settings.options():
        if option.argument is None:
            continue
        where = f"Env {', '.join(f'``{v}``' for v in option.env)}; d" if option.env else "D"
        text = f"{option.argument}: {option.doc} {where}efault {option.default}."
        lines.append(textwrap.fill(text, 92, initial_indent="    ", subsequent_indent="        "))
        if option.argument == "redact":
            lines.append("    maskers: custom maskers, tried before the built-ins.")
    return "\n".join(lines)
