"""One step of a trace: its options, what is fixed per decorated function, and one call.

A :class:`StepSpec` is built once per decorated function (span name, static attributes,
parameter layout, the recorders of its action); a :class:`Step` lives for one call: it holds
the span, the context it runs in and the attributes it gathers, records the result or the
error through the spec's recorders, and ends the span. Every method fails open: telemetry
errors are logged at debug level and never reach the application. The recorders of each
action sit beside the data they record (``_record_request``, ``_evidence_attributes``,
``_record_answer``, ``_record_tool``); the generic ones (the query, arguments and return value
as JSON) are here.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from . import semconv as sc
from ._failure import record_exception
from ._record import AttributeValue, Recorder, text_of
from ._runtime import Settings, logger
from ._settings import Content

__all__ = [
    "ErrorRecorder",
    "InputRecorder",
    "PathsHook",
    "ResultRecorder",
    "Step",
    "StepOptions",
    "StepSpec",
    "arguments_of",
    "failures",
    "find_query",
    "io_inputs",
    "io_result",
    "record_query",
]

#: ``recorder(step, args, kwargs)``: records what the step was called with.
InputRecorder = Callable[["Step", tuple[Any, ...], Mapping[str, Any]], None]
#: ``recorder(step, result, total)``: records what the step returned (``total``: the number
#: of items a generator step yielded, when it yielded more than were kept).
ResultRecorder = Callable[["Step", Any, "int | None"], None]
#: ``recorder(step, exc)``: records what an exception raised by the step says.
ErrorRecorder = Callable[["Step", BaseException], None]
#: ``paths_hook(arguments, result) -> paths``: the paths/resources a tool call read.
PathsHook = Callable[[Mapping[str, Any], Any], Iterable[Any]]

_CAPTURE_EVIDENCE: Final = Content.EVIDENCE
_CAPTURE_IO: Final = Content.IO
_CAPTURE_QUERY: Final = Content.QUERY
_RETRIEVE: Final = sc.Action.RETRIEVE
_RERANK: Final = sc.Action.RERANK
_QUERY_NAMES: Final = ("query", "question")
_INPUT: Final = sc.OI_INPUT_VALUE
_INPUT_MIME: Final = sc.OI_INPUT_MIME_TYPE
_OUTPUT: Final = sc.OI_OUTPUT_VALUE
_OUTPUT_MIME: Final = sc.OI_OUTPUT_MIME_TYPE
_GT_QUERY: Final = sc.GT_RETRIEVAL_QUERY
_GENAI_QUERY: Final = sc.GENAI_RETRIEVAL_QUERY_TEXT
_RERANKER_QUERY: Final = sc.OI_RERANKER_QUERY
_TEXT: Final = "text/plain"
_JSON: Final = "application/json"
_attach: Final = otel_context.attach
_detach: Final = otel_context.detach
_EXCEPTIONS: Final[tuple[type[BaseException], ...]] = (Exception,)


def failures() -> tuple[type[BaseException], ...]:
    """The exceptions a step records as its failure (``except failures() as exc``).

    Every ``Exception`` and, once asyncio is loaded, ``asyncio.CancelledError``: a
    ``BaseException`` raised inside the step when the task running it is cancelled
    (``task.cancel()``, an ``asyncio.wait_for`` timeout, a failed sibling in a ``TaskGroup``).
    ``KeyboardInterrupt``, ``SystemExit`` and ``GeneratorExit`` are no failure of the step.

    Looked up only when an exception propagates: the SDK does not import asyncio (it costs
    more to import than the SDK), and no ``CancelledError`` exists before asyncio is loaded.
    """
    asyncio = sys.modules.get("asyncio")
    return _EXCEPTIONS if asyncio is None else (Exception, asyncio.CancelledError)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepOptions:
    """Options of a step; each decorator exposes the ones that apply to its action."""

    name: str | None = None
    attributes: Mapping[str, AttributeValue] | None = None
    query_param: str | None = None
    # RETRIEVE / RERANK
    retriever: str | None = None
    k: int | None = None
    mode: str | None = None
    data_source: str | None = None
    model: str | None = None
    to_evidence: Callable[[Any], Any] | None = None
    # ANSWER
    to_answer: Callable[[Any], Any] | None = None
    replayable: bool = False
    evidence_param: str | None = None
    # TOOL
    paths: tuple[str, ...] = ()
    paths_hook: PathsHook | None = None
    call_id_param: str = "call_id"
    description: str | None = None
    # REQUEST
    app_name: str | None = None
    app_version: str | None = None
    source_id: str | None = None
    case_id_param: str = "case_id"
    session_id_param: str = "session_id"
    user_id_param: str = "user_id"
    source_id_param: str = "source_id"


@dataclass(frozen=True, slots=True)
class StepSpec:
    """Everything about a step that does not change from call to call.

    Attributes:
        on_inputs: records the call's arguments by the convention of the action.
        on_result: records the return value by the convention of the action.
        on_error: records what an exception raised by the step says (TOOL: its status).
        query_index: position of ``query_param`` among the positional parameters.
        request_indexes: REQUEST: positions of the id parameters (case/session/user/source)
            among the positional parameters; None when arguments are read by binding.
        replayable: ANSWER: the replay entry point is recorded (so are the extra kwargs).
        replay_extra: ANSWER: some argument other than the query and the evidence can be
            passed, so the extra kwargs must be read from each call.
        schema_on_root: the schema version is written when the span is a root (it is not
            among the static attributes already).
        statics: the attributes a span starts with, for each GenAI attribute set (``static``
            plus that set's keys).
        span_kind: ``CLIENT`` for RETRIEVE (the GenAI retrieval span's kind), else
            ``INTERNAL``.
    """

    action: sc.Action
    options: StepOptions
    span_name: str
    static: dict[str, AttributeValue]
    on_inputs: InputRecorder
    on_result: ResultRecorder
    statics: Mapping[sc.GenAIConventions, dict[str, AttributeValue]] = field(default_factory=dict)
    on_error: ErrorRecorder | None = None
    positional: tuple[str, ...] = ()
    varargs: bool = False
    skip_first: bool = False
    signature: inspect.Signature | None = None
    query_param: str | None = None
    query_index: int | None = None
    evidence_param: str | None = None
    replay_skip: frozenset[str] = field(default_factory=frozenset)
    request_indexes: Mapping[str, int] | None = None
    replayable: bool = False
    replay_extra: bool = False
    schema_on_root: bool = True
    span_kind: SpanKind = SpanKind.INTERNAL


class Step(Recorder):
    """One running step: its span, the context it runs in and, while its span records, the
    attributes it gathers (a step is its own :class:`~._record.Recorder`)."""

    __slots__ = ("arguments", "ctx", "recording", "span", "spec")

    def __init__(
        self,
        spec: StepSpec,
        span: Span,
        current: Settings,
        parent: otel_context.Context | None = None,
    ) -> None:
        # the Recorder's fields, set here rather than through its __init__ (hot path)
        self.settings = current
        self.attrs = {}
        self.truncated = None
        self.fired = None
        self.spec = spec
        self.span = span
        self.recording: bool = span.is_recording()
        self.arguments: dict[str, Any] | None = None
        #: the context with the step's span current, attached around the step's code
        self.ctx = trace.set_span_in_context(span, parent)

    @property
    def rec(self) -> Recorder | None:
        """The recorder of the step's attributes; None when the span does not record (or
        the step has ended)."""
        return self if self.recording else None

    # -- context -------------------------------------------------------------------------
    def attach(self) -> object:
        """Make the step's span current; returns the token for :meth:`detach`."""
        return _attach(self.ctx)

    @staticmethod
    def detach(token: object) -> None:
        """Restore the context that was current before :meth:`attach`."""
        _detach(token)  # type: ignore[arg-type]

    # -- recording -----------------------------------------------------------------------
    def record_query(self, query: object) -> None:
        """Record the query a RETRIEVE/RERANK/ANSWER step works on (query capture only)."""
        if self.recording:
            record_query(self, self.spec.action, query)

    def succeed(self, result: object, total: int | None = None) -> None:
        """Record the step's return value by the convention of its action."""
        if not self.recording:
            return
        try:
            self.spec.on_result(self, result, total)
        except Exception:
            logger.debug("recording result of %s failed", self.spec.span_name, exc_info=True)

    def fail(self, exc: BaseException) -> None:
        """Record an exception raised by the step (the caller re-raises it unchanged): one of
        :func:`failures`, a cancellation included (``error.type`` ``CancelledError``).

        As :func:`~._failure.record_exception` records it: the message and traceback are
        content, recorded (masked and clipped) only when ``exceptions`` content is captured.
        """
        if not self.recording:
            return
        try:
            on_error = self.spec.on_error
            if on_error is not None:
                on_error(self, exc)
            record_exception(self.span, self, exc)
        except Exception:
            logger.debug("recording exception on %s failed", self.spec.span_name, exc_info=True)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Set an extra attribute (written when the step ends)."""
        if self.recording:
            self.attrs[key] = value

    def close(self) -> None:
        """Write the gathered attributes and end the span."""
        span = self.span
        if self.recording:
            self.recording = False
            try:
                attrs = self.final() if self.truncated or self.fired else self.attrs
                if attrs:
                    span.set_attributes(attrs)
            except Exception:
                logger.debug("writing attributes of %s failed", self.spec.span_name, exc_info=True)
        try:
            span.end()
        except Exception:
            logger.debug("ending span %s failed", self.spec.span_name, exc_info=True)


def arguments_of(
    spec: StepSpec, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults not filled in; self/cls dropped)."""
    if spec.varargs and spec.signature is not None:
        try:
            bound = spec.signature.bind_partial(*args, **kwargs).arguments
        except TypeError:
            bound = {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)
    elif spec.signature is None:
        bound = {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)
    else:
        bound = dict(zip(spec.positional, args, strict=False))
        if kwargs:
            bound.update(kwargs)
    if spec.skip_first and spec.positional:
        bound.pop(spec.positional[0], None)
    return bound


def find_query(spec: StepSpec, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> object:
    """The query argument: ``query_param``, else a ``query``/``question`` keyword, else the
    first string argument."""
    name = spec.query_param
    if name is not None:
        if name in kwargs:
            return kwargs[name]
        index = spec.query_index
        return args[index] if index is not None and index < len(args) else None
    if kwargs:
        for key in _QUERY_NAMES:
            if key in kwargs:
                return kwargs[key]
    skip = spec.skip_first
    for value in args:
        if skip:
            skip = False
        elif isinstance(value, str):
            return value
    return None


def record_query(rec: Recorder, action: sc.Action, query: object) -> None:
    """Record the query a RETRIEVE/RERANK/ANSWER step works on (query capture only)."""
    if query is None or not rec.settings.captures(_CAPTURE_QUERY):
        return
    text = rec.text(_INPUT, query if type(query) is str else text_of(query) or "")
    attrs = rec.attrs
    attrs[_INPUT] = text
    attrs[_INPUT_MIME] = _TEXT
    if action is _RETRIEVE:
        attrs[_GT_QUERY] = text
        if rec.settings.genai_latest:
            attrs[_GENAI_QUERY] = text
    elif action is _RERANK:
        attrs[_GT_QUERY] = text
        attrs[_RERANKER_QUERY] = text


def io_inputs(step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """VERIFY / INFER / SELECT: the arguments as JSON (``io`` and ``evidence`` capture)."""
    settings = step.settings
    if settings.captures(_CAPTURE_IO) and settings.captures(_CAPTURE_EVIDENCE):
        attrs = step.attrs
        attrs[_INPUT] = step.json(_INPUT, arguments_of(step.spec, args, kwargs))
        attrs[_INPUT_MIME] = _JSON


def io_result(step: Step, result: Any, total: int | None) -> None:
    """VERIFY / INFER: the return value as JSON (``io`` capture)."""
    if result is not None and step.settings.captures(_CAPTURE_IO):
        step.attrs[_OUTPUT] = step.json(_OUTPUT, result)
        step.attrs[_OUTPUT_MIME] = _JSON
