"""Which span convention a span follows, and which action of our vocabulary it maps to."""

from __future__ import annotations

from enum import StrEnum

from groundtrace.collectors.spans import AttributeValue
from groundtrace.sdk import semconv as sc

__all__ = ["Convention", "action_of", "detect_convention"]


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


_OI_ACTIONS = {
    sc.OpenInferenceSpanKind.RETRIEVER.value: sc.Action.RETRIEVE,
    sc.OpenInferenceSpanKind.RERANKER.value: sc.Action.RERANK,
    sc.OpenInferenceSpanKind.LLM.value: sc.Action.LLM,
    sc.OpenInferenceSpanKind.TOOL.value: sc.Action.TOOL,
}
_OI_ROOT_KINDS = {sc.OpenInferenceSpanKind.CHAIN.value, sc.OpenInferenceSpanKind.AGENT.value}
_GENAI_ACTIONS = {
    sc.GenAIOperation.CHAT.value: sc.Action.LLM,
    sc.GenAIOperation.TEXT_COMPLETION.value: sc.Action.LLM,
    "generate_content": sc.Action.LLM,
    sc.GenAIOperation.RETRIEVAL.value: sc.Action.RETRIEVE,
    sc.GenAIOperation.EXECUTE_TOOL.value: sc.Action.TOOL,
}
_TRACELOOP_LLM_TYPES = {"chat", "completion"}
_TRACELOOP_ROOT_KINDS = {"workflow", "agent", "task"}


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
            if is_root and operation == sc.GenAIOperation.INVOKE_AGENT.value:
                return sc.Action.REQUEST
            return None
        if sc.GENAI_REQUEST_MODEL in attrs:
            return sc.Action.LLM
    return None
