"""Build OTLP/JSON and OTLP protobuf trace files by hand, for collector tests.

Usage::

    from tests.support.otlp_spans import SpanSpec, request_json, write_jsonl

    spans = [SpanSpec("r", None, "request", 0, 100, {sc.GT_ACTION: "REQUEST"})]
    write_jsonl(tmp_path / "t.jsonl", [spans])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundtrace.sdk import semconv as sc

__all__ = [
    "TRACE_A",
    "TRACE_B",
    "SpanSpec",
    "agent_trace",
    "encode_value",
    "rag_trace",
    "request_json",
    "request_proto",
    "sid",
    "write_jsonl",
]

TRACE_A = "0af7651916cd43dd8448eb211c80319c"
TRACE_B = "4bf92f3577b34da6a3ce929d0e0e4736"


def sid(n: int) -> str:
    """A deterministic 16-hex-digit span id."""
    return f"{n:016x}"


@dataclass
class SpanSpec:
    """One span to encode (ids are hex; times in nanoseconds)."""

    span_id: str
    parent: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    trace_id: str = TRACE_A
    status: int = 0
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)


def encode_value(value: Any) -> dict[str, Any]:
    """OTLP/JSON AnyValue of a Python value."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    if isinstance(value, dict):
        return {
            "kvlistValue": {
                "values": [{"key": k, "value": encode_value(v)} for k, v in value.items()]
            }
        }
    raise TypeError(value)


def _attrs(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": encode_value(v)} for k, v in attributes.items()]


def request_json(spans: Sequence[SpanSpec], service: str = "svc") -> dict[str, Any]:
    """One ExportTraceServiceRequest (OTLP/JSON) holding ``spans``."""
    encoded = []
    for s in spans:
        obj: dict[str, Any] = {
            "traceId": s.trace_id,
            "spanId": s.span_id,
            "name": s.name,
            "kind": 1,
            "startTimeUnixNano": str(s.start),
            "endTimeUnixNano": str(s.end),
            "attributes": _attrs(s.attributes),
            "status": {"code": s.status} if s.status else {},
        }
        if s.parent:
            obj["parentSpanId"] = s.parent
        if s.events:
            obj["events"] = [
                {"name": n, "timeUnixNano": str(t), "attributes": _attrs(a)} for n, t, a in s.events
            ]
        encoded.append(obj)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attrs({sc.SERVICE_NAME: service})},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": encoded}],
            }
        ]
    }


def request_proto(spans: Sequence[SpanSpec], service: str = "svc") -> bytes:
    """The same request serialised as protobuf."""
    obj = request_json(spans, service)
    # the generic protobuf JSON mapping wants base64 ids; convert from hex
    import base64

    for rs in obj["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    message = json_format.ParseDict(obj, ExportTraceServiceRequest())
    return message.SerializeToString()


def write_jsonl(path: Path, batches: Iterable[Sequence[SpanSpec]]) -> Path:
    """Write one OTLP/JSON line per batch."""
    with open(path, "w", encoding="utf-8") as handle:
        for batch in batches:
            handle.write(json.dumps(request_json(batch), separators=(",", ":")) + "\n")
    return path


def rag_trace(trace_id: str = TRACE_A, base: int = 1_700_000_000_000_000_000) -> list[SpanSpec]:
    """A complete groundtrace RAG trace: REQUEST > RETRIEVE, SELECT, LLM, ANSWER."""
    evidence = [
        {
            "id": "d1",
            "rank": 1,
            "score": 2.5,
            "title": "Jaws (film)",
            "source": "wiki",
            "version": "2024-01",
            "content": "Jaws is a 1975 film directed by Steven Spielberg.",
        },
        {
            "id": "d2",
            "rank": 2,
            "score": 1.25,
            "title": "Spielberg",
            "source": "wiki",
            "content_hash": "sha256:ab12",
            "length": 412,
            "metadata": {"lang": "en"},
        },
    ]
    request = {
        "model": "local-model",
        "messages": [
            {"role": "system", "content": "Answer from the evidence."},
            {"role": "user", "content": "Who directed Jaws?"},
        ],
        "temperature": 0.0,
        "seed": 7,
    }
    root = sid(1)
    t = trace_id
    return [
        SpanSpec(
            root,
            None,
            "request",
            base,
            base + 1000,
            {
                sc.GT_ACTION: "REQUEST",
                sc.GT_SCHEMA_VERSION: sc.SCHEMA_VERSION,
                sc.GT_REQUEST_QUERY: "Who directed Jaws?",
                sc.GT_REQUEST_CASE_ID: "case-1",
                sc.GT_APP_NAME: "hotpot-rag",
                sc.GT_APP_VERSION: "1.2.0",
                sc.GT_SESSION_ID: "sess-1",
                sc.OI_SPAN_KIND: "CHAIN",
                sc.OI_INPUT_VALUE: "Who directed Jaws?",
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(2),
            root,
            "bm25",
            base + 10,
            base + 100,
            {
                sc.GT_ACTION: "RETRIEVE",
                sc.GT_STEP_NAME: "bm25_top2",
                sc.GT_EVIDENCE: json.dumps(evidence),
                sc.GT_EVIDENCE_COUNT: 2,
                sc.GT_RETRIEVAL_RETRIEVER: "bm25",
                sc.GT_RETRIEVAL_K: 2,
                sc.OI_SPAN_KIND: "RETRIEVER",
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(3),
            root,
            "select",
            base + 110,
            base + 120,
            {
                sc.GT_ACTION: "SELECT",
                sc.GT_SELECTED_IDS: ["d1"],
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(4),
            root,
            "chat local-model",
            base + 130,
            base + 800,
            {
                sc.GT_ACTION: "LLM",
                sc.GT_LLM_REQUEST: json.dumps(request),
                sc.GT_LLM_BASE_URL: "http://127.0.0.1:8080/v1",
                sc.GT_LLM_API: "chat.completions",
                sc.GT_LLM_STREAM: False,
                sc.GT_LLM_OUTPUT_TEXT: "Steven Spielberg",
                sc.GT_PROMPT_EVIDENCE_BLOCK: "[d1] Jaws (film)\nJaws is a 1975 film...",
                sc.GT_PROMPT_EVIDENCE_IDS: ["d1"],
                sc.GT_PROMPT_FORMAT: "groundtrace.chunks/1",
                sc.OI_SPAN_KIND: "LLM",
                sc.OI_LLM_MODEL_NAME: "local-model",
                sc.GENAI_OPERATION_NAME: "chat",
                sc.GENAI_PROVIDER_NAME: "openai",
                sc.GENAI_REQUEST_MODEL: "local-model",
                sc.GENAI_RESPONSE_MODEL: "local-model",
                sc.GENAI_USAGE_INPUT_TOKENS: 42,
                sc.GENAI_USAGE_OUTPUT_TOKENS: 3,
                sc.GENAI_RESPONSE_FINISH_REASONS: ["stop"],
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(5),
            root,
            "answer",
            base + 810,
            base + 900,
            {
                sc.GT_ACTION: "ANSWER",
                sc.GT_ANSWER_TEXT: "Steven Spielberg",
                sc.GT_ANSWER_CONFIDENCE: 0.9,
                sc.GT_ANSWER_CITED_IDS: ["d1"],
                sc.GT_ANSWER_QUOTES: ["directed by Steven Spielberg"],
                sc.GT_REPLAY_ENTRYPOINT: "examples.hotpot_rag.app:answer",
                sc.GT_REPLAY_KWARGS: json.dumps({"style": "short"}),
                sc.GT_REPLAY_QUERY_PARAM: "question",
                sc.GT_REPLAY_EVIDENCE_PARAM: "evidence",
            },
            trace_id=t,
        ),
    ]


def agent_trace(trace_id: str = TRACE_B, base: int = 1_700_000_000_000_000_000) -> list[SpanSpec]:
    """A groundtrace agent trace with two TOOL steps (one failing) and a replay link."""
    root = sid(11)
    t = trace_id
    return [
        SpanSpec(
            root,
            None,
            "request",
            base,
            base + 5000,
            {
                sc.GT_ACTION: "REQUEST",
                sc.GT_SCHEMA_VERSION: sc.SCHEMA_VERSION,
                sc.GT_REQUEST_QUERY: "What is the return policy?",
                sc.GT_APP_NAME: "docs-agent",
                sc.GT_APP_VERSION: "0.3",
                sc.GT_SOURCE_ID: "policy-2024",
                sc.GT_REPLAY_OF: TRACE_A,
                sc.GT_REPLAY_OPERATOR: "REMOVE",
                sc.GT_REPLAY_TARGET_ID: "d2",
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(12),
            root,
            "read_document",
            base + 10,
            base + 200,
            {
                sc.GT_ACTION: "TOOL",
                sc.GT_TOOL_NAME: "read_document",
                sc.GT_TOOL_CALL_ID: "call_1",
                sc.GT_TOOL_ARGUMENTS: json.dumps({"path": "/docs/returns.md"}),
                sc.GT_TOOL_STATUS: "ok",
                sc.GT_TOOL_PATHS_READ: ["/docs/returns.md"],
                sc.GT_TOOL_RESULT_SIZE: 24,
                sc.GT_TOOL_RESULT_HASH: "sha256:00ff",
                sc.GT_TOOL_RESULT_CONTENT: "Return policy: 30 days.",
            },
            trace_id=t,
        ),
        SpanSpec(
            sid(13),
            root,
            "read_document",
            base + 210,
            base + 300,
            {
                sc.GT_ACTION: "TOOL",
                sc.GT_TOOL_NAME: "read_document",
                sc.GT_TOOL_CALL_ID: "call_2",
                sc.GT_TOOL_ARGUMENTS: json.dumps({"path": "/docs/missing.md"}),
                sc.GT_TOOL_STATUS: "error",
                sc.GT_TOOL_ERROR_TYPE: "FileNotFoundError",
            },
            trace_id=t,
            status=2,
        ),
        SpanSpec(
            sid(14),
            root,
            "answer",
            base + 310,
            base + 400,
            {
                sc.GT_ACTION: "ANSWER",
                sc.GT_ANSWER_TEXT: "30 days.",
                sc.GT_ANSWER_CONFIDENCE: 0.75,
                sc.GT_ANSWER_CITED_IDS: ["/docs/returns.md"],
                sc.GT_CONTENT_CAPTURED: True,
            },
            trace_id=t,
        ),
    ]
