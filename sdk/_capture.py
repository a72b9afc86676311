"""The span-lifecycle core shared by every decorator adapter and context manager.

A :class:`StepSpec` is built once per decorated function (span name, static attributes,
parameter layout); a :class:`Step` lives for one call: it starts the span, records inputs,
attaches/detaches the span's context around the code that runs *inside* the step, records
the result or the error, and ends the span. Every method fails open: telemetry errors are
logged at debug level and never reach the application.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from . import semconv as sc
from ._attributes import safe_str
from ._capture_record import (
    INPUT_RECORDERS,
    RESULT_RECORDERS,
    InputRecorder,
    ResultRecorder,
    record_query,
)
from ._record import AttributeValue, Recorder
from ._record_tool import (
    PathsHook,
    parameters_schema,
    record_tool_error,
    tool_static_attributes,
)
from ._runtime import _STATE, Settings, active_tracer, logger
from ._threads import ensure_thread_propagation

__all__ = ["GenCollector", "Step", "StepOptions", "StepSpec", "begin", "build_spec"]

_EVIDENCE_ACTIONS: Final = frozenset({sc.Action.RETRIEVE, sc.Action.RERANK, sc.Action.SELECT})


class _ThreadsCheck:
    """Whether thread propagation was ensured (it installs once; skip the call afterwards)."""

    __slots__ = ("checked",)

    def __init__(self) -> None:
        self.checked = False


_THREADS: Final = _ThreadsCheck()
# Enum members bound once: looking ``sc.Action.X`` up costs more than the comparison.
_ANSWER: Final = sc.Action.ANSWER
_TOOL: Final = sc.Action.TOOL
_SCHEMA_KEY: Final = sc.GT_SCHEMA_VERSION
_NO_KWARGS: Final[Mapping[str, Any]] = MappingProxyType({})
_get_current: Final = otel_context.get_current
_attach: Final = otel_context.attach
_detach: Final = otel_context.detach


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
        query_index: position of ``query_param`` among the positional parameters.
        request_indexes: REQUEST: positions of the id parameters (case/session/user/source)
            among the positional parameters; None when arguments are read by binding.
        replayable: ANSWER: the replay entry point is recorded (so are the extra kwargs).
        replay_extra: ANSWER: some argument other than the query and the evidence can be
            passed, so the extra kwargs must be read from each call.
        schema_on_root: the schema version is written when the span is a root (it is not
            among the static attributes already).
    """

    action: sc.Action
    options: StepOptions
    span_name: str
    static: dict[str, AttributeValue]
    on_inputs: InputRecorder
    on_result: ResultRecorder
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


def _layout(fn: Callable[..., Any]) -> tuple[inspect.Signature | None, tuple[str, ...], bool, bool]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, (), True, False
    names: list[str] = []
    varargs = False
    for param in sig.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind is param.VAR_POSITIONAL:
            varargs = True
    skip_first = bool(names) and names[0] in ("self", "cls") and "." in fn.__qualname__
    return sig, tuple(names), varargs, skip_first


def _entrypoint(fn: Callable[..., Any]) -> str | None:
    qualname = getattr(fn, "__qualname__", "")
    module = getattr(fn, "__module__", None)
    if not module or not qualname or "<locals>" in qualname or "<lambda>" in qualname:
        logger.warning(
            "replayable step %r is not importable (defined inside a function?); "
            "no replay entry point is recorded",
            qualname,
        )
        return None
    return f"{module}:{qualname}"


def build_spec(
    action: sc.Action, options: StepOptions, fn: Callable[..., Any] | None = None
) -> StepSpec:
    """Precompute the span name, static attributes and parameter layout of a step."""
    fn_name = getattr(fn, "__name__", None) if fn is not None else None
    name = options.name or fn_name or action.value.lower()
    step_name = options.name or (getattr(fn, "__qualname__", None) if fn is not None else None)
    static: dict[str, AttributeValue] = {
        sc.GT_ACTION: action.value,
        sc.GT_STEP_NAME: step_name or name,
        sc.OI_SPAN_KIND: sc.ACTION_TO_OPENINFERENCE_KIND[action].value,
    }
    operation = sc.ACTION_TO_GENAI_OPERATION.get(action)
    if operation is not None:
        static[sc.GENAI_OPERATION_NAME] = operation.value
    span_name = name
    sig, positional, varargs, skip_first = (None, (), True, False) if fn is None else _layout(fn)
    query_param = options.query_param
    evidence_param = options.evidence_param
    replay_skip: frozenset[str] = frozenset()
    replay_extra = False
    if action in (sc.Action.RETRIEVE, sc.Action.RERANK):
        source = options.data_source or options.retriever
        if source:
            span_name = f"{operation.value if operation else 'rerank'} {source}"
        if options.retriever:
            static[sc.GT_RETRIEVAL_RETRIEVER] = options.retriever
        if options.mode:
            static[sc.GT_RETRIEVAL_MODE] = options.mode
        if options.k is not None:
            static[sc.GT_RETRIEVAL_K] = options.k
        if action is sc.Action.RETRIEVE:
            if options.k is not None:
                static[sc.GENAI_RETRIEVAL_TOP_K] = options.k
            if source:
                static[sc.GENAI_DATA_SOURCE_ID] = source
        else:
            if options.k is not None:
                static[sc.OI_RERANKER_TOP_K] = options.k
            if options.model:
                static[sc.OI_RERANKER_MODEL_NAME] = options.model
    elif action is sc.Action.TOOL:
        description = options.description
        if description is None and fn is not None and fn.__doc__:
            description = inspect.cleandoc(fn.__doc__).split("\n", 1)[0]
        skip = [options.call_id_param, "self", "cls"]
        schema = parameters_schema(fn, skip) if fn is not None else {"type": "object"}
        static.update(tool_static_attributes(name, description, schema))
        span_name = f"{sc.GenAIOperation.EXECUTE_TOOL.value} {name}"
    elif action is sc.Action.REQUEST:
        static[sc.GT_SCHEMA_VERSION] = sc.SCHEMA_VERSION
        if options.app_name:
            static[sc.GT_APP_NAME] = options.app_name
        if options.app_version:
            static[sc.GT_APP_VERSION] = options.app_version
        if options.source_id:
            static[sc.GT_SOURCE_ID] = options.source_id
    elif action is sc.Action.ANSWER and options.replayable and fn is not None:
        entry = _entrypoint(fn)
        params = positional[1:] if skip_first else positional
        query_param = query_param or (params[0] if params else None)
        evidence_param = evidence_param or (params[1] if len(params) > 1 else None)
        if entry is not None:
            static[sc.GT_REPLAY_ENTRYPOINT] = entry
            if query_param:
                static[sc.GT_REPLAY_QUERY_PARAM] = query_param
            if evidence_param:
                static[sc.GT_REPLAY_EVIDENCE_PARAM] = evidence_param
        replay_skip = frozenset(p for p in (query_param, evidence_param, "self", "cls") if p)
        replay_extra = (
            sig is None
            or varargs
            or any(
                p.kind is p.VAR_KEYWORD or p.name not in replay_skip
                for p in sig.parameters.values()
            )
        )
    if options.attributes:
        static.update(options.attributes)
    request_indexes: dict[str, int] | None = None
    if action is sc.Action.REQUEST and sig is not None and not varargs:
        names = (
            options.case_id_param,
            options.session_id_param,
            options.user_id_param,
            options.source_id_param,
        )
        start = 1 if skip_first else 0
        request_indexes = {p: i for i, p in enumerate(positional) if i >= start and p in names}
    return StepSpec(
        action=action,
        options=options,
        span_name=span_name,
        static=static,
        on_inputs=INPUT_RECORDERS[action],
        on_result=RESULT_RECORDERS[action],
        positional=positional,
        varargs=varargs,
        skip_first=skip_first,
        signature=sig,
        query_param=query_param,
        query_index=positional.index(query_param) if query_param in positional else None,
        evidence_param=evidence_param,
        replay_skip=replay_skip,
        request_indexes=request_indexes,
        replayable=action is _ANSWER and sc.GT_REPLAY_ENTRYPOINT in static,
        replay_extra=replay_extra,
        schema_on_root=_SCHEMA_KEY not in static,
    )


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
            self.spec.on_result(self, self, result, total)
        except Exception:
            logger.debug("recording result of %s failed", self.spec.span_name, exc_info=True)

    def fail(self, exc: BaseException) -> None:
        """Record an exception raised by the step (the caller re-raises it unchanged)."""
        span = self.span
        try:
            if self.recording:
                self.attrs[sc.ERROR_TYPE] = type(exc).__qualname__
                if self.spec.action is _TOOL:
                    record_tool_error(self, exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__qualname__}: {safe_str(exc)}"))
            span.record_exception(exc)
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


def begin(
    spec: StepSpec,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    tracer: Tracer | None = None,
) -> Step | None:
    """Start a step's span; ``None`` when disabled, suppressed, nothing could record or
    telemetry failed.

    ``tracer`` is the one :func:`~._runtime.active_tracer` returned, when the caller has it.
    """
    current = _STATE.settings
    if not current.enabled:
        return None
    if tracer is None:
        tracer = active_tracer()
        if tracer is None:
            return None
    try:
        parent = _get_current()
        if parent.get(_SUPPRESS_INSTRUMENTATION_KEY):
            return None
        if not _THREADS.checked and current.propagate_threads:
            _THREADS.checked = True
            ensure_thread_propagation()
        span = tracer.start_span(spec.span_name, parent, attributes=spec.static)
        step = Step(spec, span, current, parent)
    except Exception:
        logger.debug("starting span %s failed", spec.span_name, exc_info=True)
        return None
    if step.recording:  # record what the step was called with
        try:
            if spec.schema_on_root and (not parent or getattr(span, "parent", False) is None):
                step.attrs[_SCHEMA_KEY] = sc.SCHEMA_VERSION  # a root span
            spec.on_inputs(step, step, args, _NO_KWARGS if kwargs is None else kwargs)
        except Exception:
            logger.debug("recording inputs of %s failed", spec.span_name, exc_info=True)
    return step


class GenCollector:
    """Gathers what a generator step yields, bounded, into the value recorded at the end.

    RETRIEVE/RERANK/SELECT: the yielded items (first ``max_evidence_items``, plus the
    count); ANSWER/TOOL: string chunks joined (or the last non-string item); other actions:
    the yielded items.
    """

    __slots__ = ("_action", "_chunks", "_count", "_items", "_last", "_limit")

    def __init__(self, step: Step) -> None:
        self._action = step.spec.action
        self._limit = step.settings.max_evidence_items if step.recording else 0
        self._items: list[Any] = []
        self._chunks: list[str] = []
        self._last: object = None
        self._count = 0

    def add(self, item: object) -> None:
        """Note one yielded item."""
        self._count += 1
        if self._action in (_ANSWER, _TOOL):
            if isinstance(item, str):
                self._chunks.append(item)
            else:
                self._last = item
        elif len(self._items) < self._limit:
            self._items.append(item)

    def finish(self, step: Step) -> None:
        """Record the gathered value as the step's result."""
        if self._action in (_ANSWER, _TOOL):
            value = self._last if self._last is not None else "".join(self._chunks)
            step.succeed(value)
        elif self._action in _EVIDENCE_ACTIONS:
            step.succeed(self._items, total=self._count)
        else:
            step.succeed(self._items)
