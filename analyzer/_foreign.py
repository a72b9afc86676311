"""What the analyses read of a trace of another instrumentation, and what it still lacks.

An app instrumented only with OpenInference, OpenLLMetry (Traceloop) or the official OTel
GenAI instrumentation (``opentelemetry-instrumentation-openai-v2``) often has no request span
carrying the question and the answer: its root is an LLM span, a plain span of the app, or
an agent span of the previous GenAI conventions without messages. The collectors report that
(``no_query`` / ``no_answer``) and never guess; the analyses read the question and the answer
from what those conventions do carry, the model calls:

* the question: the last ``user`` message of the trace's first LLM call with one;
* the answer: the output text of the trace's last LLM call with one.

:func:`analysable` returns the trace with those filled in (a trace that records its own
request query or answer keeps it), and :func:`lacks` names what an analysis still lacks on a
trace, and which span of the trace's convention would have carried it, e.g. ``no retrieved
documents recorded (looked for an OpenInference RETRIEVER span with
retrieval.documents)``.

:func:`case_by_question` joins a trace that records no case id to the one case of a case file
whose question is the trace's question (whitespace and case aside).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from groundtrace.analyzer.cases import Case
from groundtrace.collectors import Trace

__all__ = [
    "analysable",
    "answer_of",
    "case_by_question",
    "convention_of",
    "document_span",
    "lacks",
    "question_index",
    "question_of",
]

#: The span each convention records retrieved documents on.
_DOCUMENT_SPANS: Final = {
    "openinference": "an OpenInference RETRIEVER span with retrieval.documents",
    "genai": "a GenAI retrieval span with gen_ai.retrieval.documents",
    "traceloop": (
        "an OpenLLMetry vector_db_retrieve span with documents in traceloop.entity.output, "
        "as its LangChain instrumentation writes; a @task's output is not read as documents"
    ),
}
_QUESTION_SPANS: Final = {
    "openinference": "a CHAIN/AGENT root with input.value or an LLM span with input messages",
    "genai": "an invoke_agent root with gen_ai.input.messages or a chat span with messages",
    "traceloop": "a workflow root with its input or an LLM span with its prompts",
}
_ANSWER_SPANS: Final = {
    "openinference": "a CHAIN/AGENT root with output.value or an LLM span with output messages",
    "genai": "an invoke_agent root with gen_ai.output.messages or a chat span with its output",
    "traceloop": "a workflow root with its output or an LLM span with its completions",
}
_CONTENT_HINT: Final = {
    "openinference": "content capture of the instrumentation is on by default; check its "
    "TraceConfig hides nothing",
    "genai": "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true and read the log "
    "records with the spans",
    "traceloop": "set TRACELOOP_TRACE_CONTENT=true",
}


def convention_of(trace: Trace) -> str | None:
    """The other instrumentation's convention of a trace (``None``: groundtrace's or none)."""
    if "groundtrace" in trace.conventions:
        return None
    for name in ("openinference", "traceloop", "genai"):  # OpenLLMetry spans use GenAI keys
        if name in trace.conventions:
            return name
    return None


def question_of(trace: Trace) -> str | None:
    """The trace's question: its request query, else the last user message of its first LLM
    call with one."""
    if trace.request.query:
        return trace.request.query
    for call in trace.llm_calls:
        users = [m.content for m in call.messages if m.role == "user" and m.content]
        if users:
            return users[-1]
    return None


def answer_of(trace: Trace) -> str | None:
    """The trace's answer: its recorded answer, else the output text of its last LLM call
    with one."""
    if trace.answer is not None:
        return trace.answer
    for call in reversed(trace.llm_calls):
        if call.output_text:
            return call.output_text
    return None


def analysable(trace: Trace) -> Trace:
    """``trace`` with its question and answer read from its LLM calls where it records none
    (see the module docstring); the same object when nothing is missing or nothing is found."""
    if trace.request.query and trace.answer is not None:
        return trace
    query, answer = question_of(trace), answer_of(trace)
    if query == trace.request.query and answer == trace.answer:
        return trace
    request = msgspec.structs.replace(trace.request, query=query)
    return msgspec.structs.replace(trace, request=request, answer=answer)


def document_span(trace: Trace) -> str:
    """The span of ``trace``'s convention that carries its retrieved documents."""
    return _DOCUMENT_SPANS.get(convention_of(trace) or "", "a RETRIEVE step")


def lacks(trace: Trace, need: str) -> str:
    """Why ``trace`` lacks ``need`` (``query``, ``answer``, ``documents``, ``document
    content``), naming the span of its convention that carries it."""
    convention = convention_of(trace)
    if need == "query":
        span = _QUESTION_SPANS.get(convention or "", "a REQUEST span with the query")
        return f"no question recorded (looked for {span})"
    if need == "answer":
        span = _ANSWER_SPANS.get(convention or "", "an ANSWER step or a request output")
        return f"no answer recorded (looked for {span})"
    if need == "documents":
        if trace.evidence:
            return lacks(trace, "document content")
        return f"no retrieved documents recorded (looked for {document_span(trace)})"
    if need == "document content":
        hint = _CONTENT_HINT.get(convention or "", "configure(capture_content=True)")
        return f"the retrieved documents were recorded without their content ({hint})"
    raise ValueError(f"unknown need {need!r}")


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def question_index(cases: Iterable[Case]) -> dict[str, Case | None]:
    """Cases by normalised question (``None`` for a question several cases share)."""
    index: dict[str, Case | None] = {}
    for case in cases:
        if case.question:
            key = _key(case.question)
            index[key] = None if key in index else case
    return index


def case_by_question(trace: Trace, index: Mapping[str, Case | None]) -> Case | None:
    """The one case whose question is the trace's question, if exactly one."""
    question = question_of(trace)
    return index.get(_key(question)) if question else None
