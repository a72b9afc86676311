"""LLM calls merge every convention's keys on a span, whichever keys are present."""

from __future__ import annotations

from groundtrace.collectors.normalize import build_trace
from groundtrace.collectors.spans import SpanRecord
from groundtrace.sdk import semconv as sc

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _trace(attrs: dict[str, object]) -> SpanRecord:
    return SpanRecord(TRACE, "00000000000000a1", None, "chat", 1, 9, attrs)  # type: ignore[arg-type]


def test_openllmetry_usage_without_messages_is_read() -> None:
    span = _trace(
        {
            sc.LLM_REQUEST_TYPE: "chat",
            sc.LLM_IS_STREAMING: True,
            sc.GENAI_LEGACY_USAGE_PROMPT_TOKENS: 12,
            sc.LLM_USAGE_TOTAL_TOKENS: 15,
        }
    )
    (call,) = build_trace([span]).llm_calls
    assert call.convention == "traceloop"
    assert call.stream is True
    assert (call.usage.input_tokens, call.usage.total_tokens) == (12, 15)
    assert call.messages == () and call.output_text is None


def test_openllmetry_key_with_a_bad_type_is_reported_on_a_groundtrace_span() -> None:
    span = _trace(
        {
            sc.GT_ACTION: sc.Action.LLM.value,
            sc.GT_LLM_REQUEST: '{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
            sc.GENAI_USAGE_INPUT_TOKENS: 7,
            sc.LLM_USAGE_TOTAL_TOKENS: "many",
        }
    )
    trace = build_trace([span])
    (call,) = trace.llm_calls
    assert call.model == "m" and call.messages[0].content == "hi"
    assert call.usage.input_tokens == 7 and call.usage.total_tokens is None
    assert [f.field for f in trace.findings_of("bad_attribute_type")] == [sc.LLM_USAGE_TOTAL_TOKENS]
