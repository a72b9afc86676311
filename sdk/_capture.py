"""How a step starts: its spec, built once per decorated function, and its span per call.

:func:`build_spec` precomputes the span name, static attributes and parameter layout of a
step and picks the recorders of its action (:data:`INPUT_RECORDERS`,
:data:`RESULT_RECORDERS`), so a call runs only the code of its own action; :func:`begin`
starts the span of one call and records its inputs; :class:`GenCollector` gathers what a
generator step yields. Everything fails open: telemetry errors are logged at debug level.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind, Tracer

from . import semconv as sc
from ._evidence_attributes import evidence_result, retrieval_inputs
from ._record import AttributeValue
from ._record_answer import answer_inputs, answer_result, select_result
from ._record_request import request_inputs, request_result
from ._record_tool import (
    parameters_schema,
    record_tool_error,
    tool_inputs,
    tool_result,
    tool_static_attributes,
)
from ._runtime import _STATE, active_tracer, is_suppressed, logger
from ._step import (
    ErrorRecorder,
    InputRecorder,
    ResultRecorder,
    Step,
    StepOptions,
    StepSpec,
    io_inputs,
    io_result,
)
from ._threads import ensure_thread_propagation

__all__ = [
    "ERROR_RECORDERS",
    "INPUT_RECORDERS",
    "RESULT_RECORDERS",
    "GenCollector",
    "begin",
    "build_spec",
]

#: The input recorder of each action.
INPUT_RECORDERS: Final[dict[sc.Action, InputRecorder]] = {
    sc.Action.REQUEST: request_inputs,
    sc.Action.RETRIEVE: retrieval_inputs,
    sc.Action.RERANK: retrieval_inputs,
    sc.Action.SELECT: io_inputs,
    sc.Action.VERIFY: io_inputs,
    sc.Action.INFER: io_inputs,
    sc.Action.ANSWER: answer_inputs,
    sc.Action.TOOL: tool_inputs,
}
#: The result recorder of each action.
RESULT_RECORDERS: Final[dict[sc.Action, ResultRecorder]] = {
    sc.Action.REQUEST: request_result,
    sc.Action.RETRIEVE: evidence_result,
    sc.Action.RERANK: evidence_result,
    sc.Action.SELECT: select_result,
    sc.Action.VERIFY: io_result,
    sc.Action.INFER: io_result,
    sc.Action.ANSWER: answer_result,
    sc.Action.TOOL: tool_result,
}
#: The error recorder of the actions that have one.
ERROR_RECORDERS: Final[dict[sc.Action, ErrorRecorder]] = {sc.Action.TOOL: record_tool_error}

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
    if module == "__main__":
        module = _main_module()
        if module is None:
            logger.warning(
                "replayable step %r is defined in __main__ with no file (an interactive "
                "session?); no replay entry point is recorded",
                qualname,
            )
            return None
    return f"{module}:{qualname}"


def _main_module() -> str | None:
    """What ``__main__`` is importable as at replay: its module name when it ran with
    ``python -m NAME``, else its script's absolute path (replay loads it from the file)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if isinstance(name, str) and name and name != "__main__":
        return name
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if isinstance(path, str) and path.endswith(".py") else None


def _statics(
    static: dict[str, AttributeValue], latest: dict[str, AttributeValue]
) -> Mapping[sc.GenAIConventions, dict[str, AttributeValue]]:
    """The start attributes of a step for each GenAI attribute set (the previous set, v1.36.0,
    has no step attributes of its own: no retrieval keys; tool keys are in both sets)."""
    current = static | latest
    return MappingProxyType(
        {
            sc.GenAIConventions.LATEST: current,
            sc.GenAIConventions.PREVIOUS: static,
            sc.GenAIConventions.BOTH: current,
        }
    )


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
    latest: dict[str, AttributeValue] = {}  # the current GenAI set only
    operation = sc.ACTION_TO_GENAI_OPERATION.get(action)
    if operation is sc.GenAIOperation.EXECUTE_TOOL:
        static[sc.GENAI_OPERATION_NAME] = operation.value
    elif operation is not None:
        latest[sc.GENAI_OPERATION_NAME] = operation.value
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
                latest[sc.GENAI_REQUEST_TOP_K] = float(options.k)  # a double in the registry
            if source:
                latest[sc.GENAI_DATA_SOURCE_ID] = source
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
        latest = {k: v for k, v in latest.items() if k not in options.attributes}
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
        statics=_statics(static, latest),
        on_inputs=INPUT_RECORDERS[action],
        on_result=RESULT_RECORDERS[action],
        on_error=ERROR_RECORDERS.get(action),
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
        span_kind=SpanKind.CLIENT if action is sc.Action.RETRIEVE else SpanKind.INTERNAL,
    )


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
        if is_suppressed(parent):
            return None
        if not _THREADS.checked and current.propagate_threads:
            _THREADS.checked = True
            ensure_thread_propagation()
        span = tracer.start_span(
            spec.span_name, parent, spec.span_kind, attributes=spec.statics[current.genai]
        )
        step = Step(spec, span, current, parent)
    except Exception:
        logger.debug("starting span %s failed", spec.span_name, exc_info=True)
        return None
    if step.recording:  # record what the step was called with
        try:
            if spec.schema_on_root and (not parent or getattr(span, "parent", False) is None):
                step.attrs[_SCHEMA_KEY] = sc.SCHEMA_VERSION  # a root span
            spec.on_inputs(step, args, _NO_KWARGS if kwargs is None else kwargs)
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
