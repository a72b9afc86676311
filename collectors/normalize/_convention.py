"""Which span convention a span follows, and which action of our vocabulary it maps to."""

from __future__ import annotations

from enum import StrEnum

from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

__all__ = ["Convention", "action_of", "detect_convention", "unknown_kind"]


class Convention(StrEnum):
    """The span conventions the normalisers understand."""

    GROUNDTRACE = "groundtrace"
    OPENINFERENCE = "openinference"
    GENAI = "genai"
    TRACELOOP = "traceloop"
    TRANSCRIPT = "transcript"
    UNKNOWN = "unknown"


_LEGACY_PROMPT_HEAD = sc.GENAI_LEGACY_PROMPT + "."
_LEGACY_COMPLETION_HEAD = sc.GENAI_LEGACY_COMPLETION + "."


def _has_legacy_messages(attrs: dict[str, AttributeValue]) -> bool:
    heads = (_LEGACY_PROMPT_HEAD, _LEGACY_COMPLETION_HEAD)
    return any(k.startswith(heads) for k in attrs)


def detect_convention(attrs: dict[str, AttributeValue]) -> Convention:
    """Detect the convention of one span from its attributes.

    Order: groundtrace (``groundtrace.action``) first; then OpenInference
    (``openinference.span.kind``); then OpenLLMetry/Traceloop (``traceloop.span.kind``,
    ``llm.request.type`` or ``gen_ai.prompt.{i}.*``); then OTel GenAI
    (``gen_ai.operation.name`` / ``gen_ai.provider.name`` / ``gen_ai.system``). Traceloop is
    checked before GenAI because Traceloop spans also carry ``gen_ai.system``.
    """
    if sc.GT_ACTION in attrs:
        return Convention.GROUNDTRACE
    if sc.OI_SPAN_KIND in attrs:
        return Convention.OPENINFERENCE
    if sc.TRACELOOP_SPAN_KIND in attrs or sc.LLM_REQUEST_TYPE in attrs:
        return Convention.TRACELOOP
    if (
        sc.GENAI_OPERATION_NAME in attrs
        or sc.GENAI_PROVIDER_NAME in attrs
        or sc.GENAI_SYSTEM in attrs
    ):
        return Convention.TRACELOOP if _has_legacy_messages(attrs) else Convention.GENAI
    return Convention.UNKNOWN


_OI = sc.OpenInferenceSpanKind
#: Every OpenInference span kind: those with an action, the rest (embedding, guardrail,
#: evaluator, prompt, decision, unknown, non-root chain/agent) are steps without one.
_OI_ACTIONS = {
    _OI.RETRIEVER.value: sc.Action.RETRIEVE,
    _OI.RERANKER.value: sc.Action.RERANK,
    _OI.LLM.value: sc.Action.LLM,
    _OI.TOOL.value: sc.Action.TOOL,
}
_OI_ROOT_KINDS = {_OI.CHAIN.value, _OI.AGENT.value}
_OI_KINDS = frozenset(k.value for k in _OI)
_OP = sc.GenAIOperation
_GENAI_ACTIONS = {
    _OP.CHAT.value: sc.Action.LLM,
    _OP.TEXT_COMPLETION.value: sc.Action.LLM,
    _OP.GENERATE_CONTENT.value: sc.Action.LLM,
    _OP.RETRIEVAL.value: sc.Action.RETRIEVE,
    _OP.EXECUTE_TOOL.value: sc.Action.TOOL,
}
_GENAI_ROOT_OPERATIONS = {_OP.INVOKE_AGENT.value, _OP.INVOKE_WORKFLOW.value}
_GENAI_OPERATIONS = frozenset(op.value for op in _OP)
_TRACELOOP_LLM_TYPES = {"chat", "completion"}
#: OpenLLMetry's retriever spans: ``gen_ai.operation.name`` of its LangChain instrumentation's
#: ``vector_db_retrieve <name>`` task spans, read as RETRIEVE.
_TRACELOOP_RETRIEVE = "vector_db_retrieve"
_TRACELOOP_ROOT_KINDS = {"workflow", "agent", "task"}
_TRACELOOP_KINDS = frozenset({*_TRACELOOP_ROOT_KINDS, "tool", "unknown"})


def unknown_kind(convention: Convention, attrs: dict[str, AttributeValue]) -> str | None:
    """The span-kind key of a span whose kind its convention does not define (else ``None``).

    The kind keys: ``openinference.span.kind``, ``traceloop.span.kind`` and
    ``gen_ai.operation.name``.
    """
    if convention is Convention.OPENINFERENCE:
        key, known = sc.OI_SPAN_KIND, _OI_KINDS
    elif convention is Convention.TRACELOOP:
        key, known = sc.TRACELOOP_SPAN_KIND, _TRACELOOP_KINDS
    elif convention is Convention.GENAI:
        key, known = sc.GENAI_OPERATION_NAME, _GENAI_OPERATIONS
    else:
        return None
    value = attrs.get(key)
    return None if value is None or (isinstance(value, str) and value in known) else key


def action_of(
    convention: Convention, attrs: dict[str, AttributeValue], is_root: bool
) -> sc.Action | None:
    """The action a non-groundtrace span maps to (``None``: not in our vocabulary).

    Root spans of a chain/agent/workflow kind become the ``REQUEST``; a span is never
    promoted to an action its convention does not state.
    """
    if convention is Convention.OPENINFERENCE:
        kind = attrs.get(sc.OI_SPAN_KIND)
        if isinstance(kind, str):
            if kind in _OI_ACTIONS:
                return _OI_ACTIONS[kind]
            if is_root and kind in _OI_ROOT_KINDS:
                return sc.Action.REQUEST
        return None
    if convention is Convention.TRACELOOP:
        request_type = attrs.get(sc.LLM_REQUEST_TYPE)
        if isinstance(request_type, str) and request_type in _TRACELOOP_LLM_TYPES:
            return sc.Action.LLM
        if attrs.get(sc.GENAI_OPERATION_NAME) == _TRACELOOP_RETRIEVE:
            return sc.Action.RETRIEVE
        kind = attrs.get(sc.TRACELOOP_SPAN_KIND)
        if kind == "tool":
            return sc.Action.TOOL
        if is_root and isinstance(kind, str) and kind in _TRACELOOP_ROOT_KINDS:
            return sc.Action.REQUEST
        if kind is None and _has_legacy_messages(attrs):
            return sc.Action.LLM
        return None
    if convention is Convention.GENAI:
        operation = attrs.get(sc.GENAI_OPERATION_NAME)
        if isinstance(operation, str):
            if operation in _GENAI_ACTIONS:
                return _GENAI_ACTIONS[operation]
            if is_root and operation in _GENAI_ROOT_OPERATIONS:
                return sc.Action.REQUEST
            return None
        if sc.GENAI_REQUEST_MODEL in attrs:
            return sc.Action.LLM
    return None
