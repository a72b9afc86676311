"""Context-manager forms of the steps: ``step(Action.X)`` and ``request_context(...)``.

Both work with ``with`` and ``async with``. The handle they yield records values by the same
conventions as the decorators (``record_evidence``, ``record_answer``, ...). When tracing is
disabled or suppressed the handle is inert and every call on it is a no-op.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from opentelemetry.trace import INVALID_SPAN, Span

from . import semconv as sc
from ._capture import begin, build_spec
from ._evidence_attributes import record_evidence
from ._record import AttributeValue
from ._record_answer import record_answer, record_selected
from ._record_request import RequestFields, record_request
from ._record_tool import record_tool_result
from ._runtime import logger
from ._step import Step, StepOptions, failures

__all__ = ["StepHandle", "StepScope", "request_context", "step"]


class StepHandle:
    """What ``with step(...) as s`` yields: record the step's values on its span."""

    __slots__ = ("_step",)

    def __init__(self, step: Step | None) -> None:
        self._step = step

    @property
    def span(self) -> Span:
        """The step's span (an invalid, non-recording span when tracing is off)."""
        return self._step.span if self._step is not None else INVALID_SPAN

    @property
    def recording(self) -> bool:
        """Whether values recorded on this handle end up on a span."""
        return self._step is not None and self._step.rec is not None

    def record(self, value: object) -> None:
        """Record ``value`` as this step's result, by the convention of its action."""
        if self._step is not None:
            self._step.succeed(value)

    def record_query(self, query: str) -> None:
        """Record the query this step works on."""
        if self._step is not None:
            self._step.record_query(query)

    def record_evidence(self, evidence: object) -> None:
        """Record an evidence list (RETRIEVE conventions; RERANK keys on a RERANK step)."""
        step = self._step
        if step is None or step.rec is None:
            return
        action = step.spec.action
        kind = sc.Action.RERANK if action is sc.Action.RERANK else sc.Action.RETRIEVE
        try:
            record_evidence(step.rec, evidence, kind)
        except Exception:
            logger.debug("record_evidence failed", exc_info=True)

    def record_selected(self, selected: object) -> None:
        """Record the evidence (items or ids) actually used."""
        step = self._step
        if step is not None and step.rec is not None:
            try:
                record_selected(step.rec, selected)
            except Exception:
                logger.debug("record_selected failed", exc_info=True)

    def record_answer(self, answer: object) -> None:
        """Record an answer (str, mapping or object)."""
        step = self._step
        if step is not None and step.rec is not None:
            try:
                record_answer(step.rec, answer)
            except Exception:
                logger.debug("record_answer failed", exc_info=True)

    def record_tool_result(self, result: object, *, paths_read: tuple[str, ...] = ()) -> None:
        """Record a tool result (status ok, size, hash, content) and the paths it read."""
        step = self._step
        if step is not None and step.rec is not None:
            try:
                hook = (lambda _a, _r: paths_read) if paths_read else None
                record_tool_result(step.rec, result, step.arguments, (), hook)
            except Exception:
                logger.debug("record_tool_result failed", exc_info=True)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Set an extra attribute on the step's span."""
        if self._step is not None:
            self._step.set_attribute(key, value)


class StepScope:
    """A step as a (sync or async) context manager; single use."""

    __slots__ = ("_fields", "_inputs", "_spec", "_step", "_token")

    def __init__(
        self,
        action: sc.Action,
        options: StepOptions,
        *,
        inputs: Mapping[str, Any] | None = None,
        fields: RequestFields | None = None,
    ) -> None:
        self._spec = build_spec(action, options)
        self._inputs = dict(inputs or {})
        self._fields = fields
        self._step: Step | None = None
        self._token: object = None

    def __enter__(self) -> StepHandle:
        step = begin(self._spec, (), self._inputs)
        self._step = step
        if step is not None:
            if step.rec is not None and self._fields is not None:
                try:
                    record_request(step.rec, self._fields, step.span, self._spec.static)
                except Exception:
                    logger.debug("recording request fields failed", exc_info=True)
            try:
                self._token = step.attach()
            except Exception:
                logger.debug("attaching step context failed", exc_info=True)
        return StepHandle(step)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        step = self._step
        if step is None:
            return
        self._step = None
        if exc is not None and isinstance(exc, failures()):  # a cancellation included
            step.fail(exc)
        if self._token is not None:
            try:
                step.detach(self._token)
            except Exception:
                logger.debug("detaching step context failed", exc_info=True)
            self._token = None
        step.close()

    async def __aenter__(self) -> StepHandle:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


def step(
    action: sc.Action | str,
    *,
    name: str | None = None,
    query: str | None = None,
    retriever: str | None = None,
    k: int | None = None,
    mode: str | None = None,
    data_source: str | None = None,
    tool_name: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    call_id: str | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> StepScope:
    """A step span around a block: ``with step(Action.RETRIEVE, retriever="bm25") as s:``.

    Args:
        action: the action of the step.
        name: step name (the tool name for TOOL).
        query: the query (RETRIEVE / RERANK / ANSWER).
        retriever: retriever name (RETRIEVE / RERANK).
        k: requested top-k.
        mode: retrieval mode.
        data_source: ``gen_ai.data_source.id``.
        tool_name: TOOL name (default ``name``).
        arguments: TOOL call arguments.
        call_id: TOOL call id.
        attributes: extra static attributes.
    """
    act = sc.Action(action)
    options = StepOptions(
        name=tool_name or name if act is sc.Action.TOOL else name,
        retriever=retriever,
        k=k,
        mode=mode,
        data_source=data_source,
        attributes=attributes,
    )
    inputs: dict[str, Any] = {}
    if act is sc.Action.TOOL:
        inputs.update(arguments or {})
        if call_id is not None:
            inputs[options.call_id_param] = call_id
    elif query is not None:
        inputs["query"] = query
    return StepScope(act, options, inputs=inputs)


def request_context(
    query: str | None = None,
    *,
    case_id: str | None = None,
    name: str | None = None,
    app_name: str | None = None,
    app_version: str | None = None,
    session_id: str | None = None,
    user_id: str | None = None,
    source_id: str | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> StepScope:
    """The root REQUEST span around a block: ``with request_context(query=q, case_id=c):``."""
    options = StepOptions(name=name or "request", attributes=attributes)
    fields = RequestFields(
        query=query,
        case_id=case_id,
        session_id=session_id,
        user_id=user_id,
        source_id=source_id,
        app_name=app_name,
        app_version=app_version,
    )
    return StepScope(sc.Action.REQUEST, options, fields=fields)
