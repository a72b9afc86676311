"""The tax desk's agent with tools, instrumented ONLY with OpenInference attribute conventions
on the OpenTelemetry SDK: no groundtrace import. Its spans go by OTLP/HTTP to the receiver
the user runs (``groundtrace collect serve``, docs/ci.md).

A scripted model stands in for the LLM (as docs/agents.md's planner does): it first asks for
the ``search_rules`` tool, then, for a mileage question with a distance, for the
``mileage_deduction`` calculator, then answers from the tool results in its prompt. Spans per
question: an AGENT root (``input.value`` the question, ``output.value`` the answer), an LLM
span per model call (``llm.input_messages`` / ``llm.output_messages`` with tool calls), a
RETRIEVER span per search (``retrieval.documents``), a TOOL span for the calculator.

Run as a user would::

    python -m tests.support.tax_desk.agent --endpoint http://127.0.0.1:4318 [--hide-inputs]
        [--search-twice] [QUESTION...]

``--hide-inputs`` records no message text (OpenInference's ``OPENINFERENCE_HIDE_INPUTS``);
``--search-twice`` makes the model call ``search_rules`` a second time with the same query
(an agent that re-reads). :func:`answer_with` is the reading step alone, for function replay
(``--replay tests.support.tax_desk.agent:answer_with``).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Tracer, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Span

from tests.support.tax_desk.rules import search

__all__ = ["DEFAULT_QUESTIONS", "answer_with", "main", "read"]

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
SYSTEM = "You are a tax desk assistant. Answer from the tool results only."
MODEL = "scripted-tax-model"
DEFAULT_QUESTIONS = (
    "How long must I keep receipts and invoices?",
    "How much can I deduct for 120 km of business travel by private car?",
    "When is the annual return of a freelancer due?",
    "Hello, who are you?",
)
_WORD = re.compile(r"[a-z0-9]+")
_DISTANCE = re.compile(r"(\d+) km")
_FACT = re.compile(r"\d[\d,.]* (?:crowns|percent)|seven years|the last day of July|eight hours")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def read(question: str, documents: Sequence[dict[str, Any]]) -> tuple[str, list[str]]:
    """The scripted model's answer: the fact of the document sharing the most words with the
    question (its first number, duration or date), and that document's id; no document, or
    none sharing a word: "I cannot find that in the rules."."""
    best = max(
        documents, key=lambda d: len(_words(question) & _words(str(d["content"]))), default=None
    )
    if best is None or not _words(question) & _words(str(best["content"])):
        return "I cannot find that in the rules.", []
    fact = _FACT.search(str(best["content"]))
    return (fact.group(0) if fact else str(best["content"])), [str(best["id"])]


def answer_with(question: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """The reading step alone: what function replay calls with an edited evidence list."""
    answer, used = read(question, evidence)
    return {"answer": answer, "used_chunks": used}


def _messages(span: Span, key: str, messages: Sequence[dict[str, Any]], hide: bool) -> None:
    for i, message in enumerate(messages):
        prefix = f"{key}.{i}."
        span.set_attribute(prefix + MessageAttributes.MESSAGE_ROLE, message["role"])
        if message.get("content") is not None and not hide:
            span.set_attribute(prefix + MessageAttributes.MESSAGE_CONTENT, message["content"])
        if message.get("tool_call_id"):
            span.set_attribute(
                prefix + MessageAttributes.MESSAGE_TOOL_CALL_ID, message["tool_call_id"]
            )
        for j, call in enumerate(message.get("tool_calls", ())):
            at = f"{prefix}{MessageAttributes.MESSAGE_TOOL_CALLS}.{j}."
            span.set_attribute(at + ToolCallAttributes.TOOL_CALL_ID, call["id"])
            span.set_attribute(at + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME, call["name"])
            span.set_attribute(
                at + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON,
                json.dumps(call["arguments"]),
            )


def _model(
    tracer: Tracer, messages: list[dict[str, Any]], reply: dict[str, Any], hide: bool
) -> None:
    with tracer.start_as_current_span("ChatCompletion") as span:
        span.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
        span.set_attribute(SpanAttributes.LLM_MODEL_NAME, MODEL)
        _messages(span, SpanAttributes.LLM_INPUT_MESSAGES, messages, hide)
        _messages(span, SpanAttributes.LLM_OUTPUT_MESSAGES, [reply], hide)


def _search(tracer: Tracer, query: str) -> list[dict[str, Any]]:
    with tracer.start_as_current_span("search_rules") as span:
        span.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
        span.set_attribute(SpanAttributes.INPUT_VALUE, query)
        found = search(query, 2)
        for i, doc in enumerate(found):
            at = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
            span.set_attribute(at + DocumentAttributes.DOCUMENT_ID, str(doc["id"]))
            span.set_attribute(at + DocumentAttributes.DOCUMENT_CONTENT, str(doc["content"]))
            span.set_attribute(at + DocumentAttributes.DOCUMENT_SCORE, float(doc["score"]))  # type: ignore[arg-type]
        return found


def _calculator(tracer: Tracer, km: int, rate: float) -> str:
    with tracer.start_as_current_span("mileage_deduction") as span:
        span.set_attribute(KIND, OpenInferenceSpanKindValues.TOOL.value)
        span.set_attribute(SpanAttributes.TOOL_NAME, "mileage_deduction")
        span.set_attribute(SpanAttributes.INPUT_VALUE, json.dumps({"km": km, "rate": rate}))
        result = f"{km * rate:.2f} crowns"
        span.set_attribute(SpanAttributes.OUTPUT_VALUE, result)
        return result


def ask(tracer: Tracer, question: str, *, hide: bool = False, twice: bool = False) -> str:
    """One question through the agent, traced."""
    with tracer.start_as_current_span("tax-desk-agent") as root:
        root.set_attribute(KIND, OpenInferenceSpanKindValues.AGENT.value)
        root.set_attribute(SpanAttributes.INPUT_VALUE, question)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question},
        ]
        documents: list[dict[str, Any]] = []
        if _words(question) & {"tax", "vat", "receipts", "return", "deduct", "invoices"}:
            searches = 2 if twice else 1
            for n in range(searches):
                call = {"id": f"call-{n}", "name": "search_rules", "arguments": {"query": question}}
                _model(tracer, messages, {"role": "assistant", "tool_calls": [call]}, hide)
                found = _search(tracer, question)
                documents.extend(found)
                text = "\n".join(f"[{d['id']}] {d['content']}" for d in found)
                messages += [
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": call["id"], "content": text},
                ]
        answer, _ = read(question, documents)
        distance = _DISTANCE.search(question)
        rate = re.search(
            r"([\d.]+) crowns per kilometre", " ".join(str(d["content"]) for d in documents)
        )
        if distance and rate:
            call = {
                "id": "call-calc",
                "name": "mileage_deduction",
                "arguments": {"km": int(distance.group(1)), "rate": float(rate.group(1))},
            }
            _model(tracer, messages, {"role": "assistant", "tool_calls": [call]}, hide)
            result = _calculator(tracer, int(distance.group(1)), float(rate.group(1)))
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": result},
            ]
            answer = result
        if not documents:
            answer = "I am the tax desk assistant: ask me about the rules."
        _model(tracer, messages, {"role": "assistant", "content": answer}, hide)
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return answer


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("questions", nargs="*", default=list(DEFAULT_QUESTIONS))
    parser.add_argument("--endpoint", required=True, help="the OTLP/HTTP receiver's base URL")
    parser.add_argument("--hide-inputs", action="store_true")
    parser.add_argument("--search-twice", action="store_true")
    args = parser.parse_args(argv)
    provider = TracerProvider(resource=Resource.create({"service.name": "tax-agent"}))
    exporter = OTLPSpanExporter(endpoint=args.endpoint.rstrip("/") + "/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tax-agent")
    for question in args.questions:
        print(ask(tracer, question, hide=args.hide_inputs, twice=args.search_twice))
    provider.shutdown()


if __name__ == "__main__":
    main()
