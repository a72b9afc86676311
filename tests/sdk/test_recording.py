"""Recording conventions: evidence, answers, selection, tools, capture policy and limits."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pytest

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc

from .conftest import Traces


def _evidence(traces: Traces, action: str = "RETRIEVE") -> list[dict[str, Any]]:
    return json.loads(str(traces.one(action).attributes[sc.GT_EVIDENCE]))


def test_evidence_dicts(traces: Traces) -> None:
    docs = [
        {
            "id": "d1",
            "title": "Jaws",
            "content": "Jaws is a film.",
            "score": 7.5,
            "version": "v2",
            "metadata": {"lang": "en"},
            "year": 1975,
        },
        {"doc_id": 42, "name": "Spielberg", "text": "A director.", "relevance_score": 3},
    ]

    @gt.retrieve(retriever="bm25")
    def search(query: str) -> list[dict[str, Any]]:
        return docs

    assert search("who?") is docs
    attrs = traces.one("RETRIEVE").attributes
    ev = _evidence(traces)
    assert ev[0] == {
        "id": "d1",
        "rank": 1,
        "title": "Jaws",
        "score": 7.5,
        "version": "v2",
        "length": 15,
        "content": "Jaws is a film.",
        "metadata": {"lang": "en", "year": 1975},
    }
    assert ev[1]["id"] == "42" and ev[1]["rank"] == 2 and ev[1]["title"] == "Spielberg"
    assert ev[1]["score"] == 3.0 and ev[1]["content"] == "A director."
    assert attrs[sc.GT_EVIDENCE_COUNT] == 2
    prefix = sc.OI_RETRIEVAL_DOCUMENTS
    assert attrs[sc.indexed(prefix, 0, sc.OI_DOCUMENT_ID)] == "d1"
    assert attrs[sc.indexed(prefix, 0, sc.OI_DOCUMENT_CONTENT)] == "Jaws is a film."
    assert attrs[sc.indexed(prefix, 1, sc.OI_DOCUMENT_SCORE)] == 3.0
    meta = json.loads(str(attrs[sc.indexed(prefix, 0, sc.OI_DOCUMENT_METADATA)]))
    assert meta["title"] == "Jaws" and meta["lang"] == "en"
    assert json.loads(str(attrs[sc.GENAI_RETRIEVAL_DOCUMENTS])) == [
        {"id": "d1", "score": 7.5},
        {"id": "42", "score": 3.0},
    ]


@dataclass
class Chunk:
    chunk_id: str
    content: str
    score: float
    rank: int


class LangChainLikeDocument:
    def __init__(self, page_content: str, metadata: dict[str, Any]) -> None:
        self.page_content = page_content
        self.metadata = metadata


def test_evidence_objects_strings_and_pairs(traces: Traces) -> None:
    @gt.retrieve
    def objects(query: str) -> list[Any]:
        return [
            Chunk("c1", "alpha", 0.9, 4),
            LangChainLikeDocument("beta", {"source": "/kb/b.md", "id": "b", "title": "B"}),
            "gamma",
            (LangChainLikeDocument("delta", {"id": "d"}), 0.25),
        ]

    objects("q")
    ev = _evidence(traces)
    assert ev[0]["id"] == "c1" and ev[0]["rank"] == 4 and ev[0]["score"] == 0.9
    assert ev[1]["id"] == "b" and ev[1]["source"] == "/kb/b.md" and ev[1]["title"] == "B"
    assert ev[1]["content"] == "beta"
    assert ev[2]["id"] == hashlib.sha256(b"gamma").hexdigest()[:16]
    assert ev[2]["rank"] == 3 and ev[2]["content"] == "gamma"
    assert ev[3]["id"] == "d" and ev[3]["score"] == 0.25


class SearchHit:
    def __init__(self, key: str, body: str) -> None:
        self.key_ = key
        self.body_ = body


def test_custom_mappers(traces: Traces) -> None:
    @gt.retrieve(to_evidence=lambda resp: resp["hits"])
    def search(query: str) -> dict[str, Any]:
        return {"hits": [{"id": "h1", "content": "x"}], "took": 3}

    gt.register_evidence_mapper(SearchHit, lambda h: {"id": h.key_, "content": h.body_})
    try:

        @gt.rerank(model="cross-encoder", k=1)
        def rerank(query: str, hits: list[SearchHit]) -> list[SearchHit]:
            return hits[:1]

        search("q")
        rerank("q", [SearchHit("k1", "one"), SearchHit("k2", "two")])
    finally:
        gt.unregister_evidence_mapper(SearchHit)
    assert _evidence(traces)[0]["id"] == "h1"
    rr = traces.one("RERANK").attributes
    assert json.loads(str(rr[sc.GT_EVIDENCE])) == [
        {"id": "k1", "rank": 1, "length": 3, "content": "one"}
    ]
    prefix = sc.OI_RERANKER_OUTPUT_DOCUMENTS
    assert rr[sc.indexed(prefix, 0, sc.OI_DOCUMENT_ID)] == "k1"
    assert rr[sc.OI_RERANKER_MODEL_NAME] == "cross-encoder"
    assert rr[sc.OI_RERANKER_QUERY] == "q"
    assert sc.GENAI_RETRIEVAL_DOCUMENTS not in rr


def test_content_capture_off_records_by_reference(traces: Traces) -> None:
    traces.settings(capture=frozenset())

    @gt.request
    def handle(question: str) -> str:
        search(question)
        return respond(question)

    @gt.retrieve(retriever="bm25")
    def search(query: str) -> list[dict[str, Any]]:
        return [{"id": "d1", "title": "Jaws", "version": "v1", "content": "secret text"}]

    @gt.answer
    def respond(question: str) -> dict[str, Any]:
        return {"answer": "hidden", "confidence": 0.7, "used_chunks": ["d1"], "quotes": ["q"]}

    handle("private question")
    ev = _evidence(traces)
    assert ev == [
        {
            "id": "d1",
            "rank": 1,
            "version": "v1",
            "length": 11,
            "content_hash": "sha256:" + hashlib.sha256(b"secret text").hexdigest(),
        }
    ]
    everything = json.dumps([dict(s.attributes or {}) for s in traces.spans()])
    for secret in ("secret text", "private question", "hidden"):
        assert secret not in everything
    r = traces.one("RETRIEVE").attributes
    assert sc.GENAI_RETRIEVAL_DOCUMENTS not in r and sc.GENAI_RETRIEVAL_QUERY_TEXT not in r
    a = traces.one("ANSWER").attributes
    assert a[sc.GT_ANSWER_CONFIDENCE] == 0.7
    assert tuple(a[sc.GT_ANSWER_CITED_IDS]) == ("d1",)
    assert sc.GT_ANSWER_QUOTES not in a and sc.GT_ANSWER_TEXT not in a


def test_truncation_and_item_limit(traces: Traces) -> None:
    traces.settings(max_attribute_length=300, max_evidence_items=2)
    long_text = "x" * 400

    @gt.retrieve
    def search(query: str) -> list[str]:
        return [long_text, "short", "third"]

    search("q")
    attrs = traces.one("RETRIEVE").attributes
    ev = json.loads(str(attrs[sc.GT_EVIDENCE]))  # still valid JSON
    assert len(str(attrs[sc.GT_EVIDENCE])) <= 300
    assert attrs[sc.GT_EVIDENCE_COUNT] == 3
    assert len(ev) == 2
    assert ev[1]["content"] == "short"
    assert ev[0]["content_hash"] == "sha256:" + hashlib.sha256(long_text.encode()).hexdigest()
    assert ev[0]["length"] == 400
    assert long_text.startswith(ev[0]["content"]) and len(ev[0]["content"]) < 400
    assert sc.GT_EVIDENCE in attrs[sc.GT_TRUNCATED]
    assert len(str(attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_CONTENT)])) == 300


def test_redaction_applies_to_captured_text(traces: Traces) -> None:
    def redact(text: str) -> tuple[str, tuple[str, ...]]:
        if "bob@example.com" in text:
            return text.replace("bob@example.com", "<EMAIL>"), ("email",)
        return text, ()

    traces.settings(redact=redact)

    @gt.retrieve
    def search(query: str) -> list[str]:
        return ["mail bob@example.com now"]

    @gt.tool
    def send(to: str) -> str:
        return f"sent to {to}"

    search("contact bob@example.com")
    send("bob@example.com")
    everything = json.dumps([dict(s.attributes or {}) for s in traces.spans()])
    assert "bob@example.com" not in everything
    assert tuple(traces.one("RETRIEVE").attributes[sc.GT_REDACTED]) == ("email",)
    assert _evidence(traces)[0]["content"] == "mail <EMAIL> now"
    tool_attrs = traces.one("TOOL").attributes
    assert tool_attrs[sc.GT_TOOL_RESULT_CONTENT] == "sent to <EMAIL>"
    assert tuple(tool_attrs[sc.GT_REDACTED]) == ("email",)


class AnswerObject:
    def __init__(self) -> None:
        self.text = "Paris"
        self.score = "0.9"
        self.citations = [{"id": "d3"}, "d4"]
        self.snippets = [{"quote": "capital of France"}]


@pytest.mark.parametrize(
    ("value", "text", "confidence", "cited", "quotes"),
    [
        ("plain answer", "plain answer", None, (), ()),
        (
            {"answer": "A", "confidence": 0.8, "used_chunks": ["d1", "d2"], "quotes": ["q1"]},
            "A",
            0.8,
            ("d1", "d2"),
            ("q1",),
        ),
        ({"text": "B", "score": 1, "cited_ids": "d9"}, "B", 1.0, ("d9",), ()),
        (AnswerObject(), "Paris", 0.9, ("d3", "d4"), ("capital of France",)),
        (
            gt.parse_answer('{"answer": "C", "confidence": 0.3, "used_chunks": ["x"]}'),
            "C",
            0.3,
            ("x",),
            (),
        ),
    ],
)
def test_answer_conventions(
    traces: Traces,
    value: object,
    text: str,
    confidence: float | None,
    cited: tuple[str, ...],
    quotes: tuple[str, ...],
) -> None:
    @gt.answer
    def respond(question: str) -> object:
        return value

    assert respond("q") is value
    attrs = traces.one("ANSWER").attributes
    assert attrs[sc.GT_ANSWER_TEXT] == text
    assert attrs[sc.OI_OUTPUT_VALUE] == text
    assert attrs.get(sc.GT_ANSWER_CONFIDENCE) == confidence
    assert tuple(attrs.get(sc.GT_ANSWER_CITED_IDS, ())) == cited
    assert tuple(attrs.get(sc.GT_ANSWER_QUOTES, ())) == quotes


def test_answer_to_answer_hook_and_streamed_answer(traces: Traces) -> None:
    @gt.answer(to_answer=lambda r: {"answer": r[0], "confidence": r[1]})
    def respond(question: str) -> tuple[str, float]:
        return ("X", 0.4)

    @gt.answer(name="streamed")
    def stream(question: str):  # type: ignore[no-untyped-def]
        yield "Hel"
        yield "lo"

    respond("q")
    assert "".join(stream("q")) == "Hello"
    spans = [s for s in traces.spans() if s.attributes[sc.GT_ACTION] == "ANSWER"]
    by_name = {s.name: s.attributes for s in spans}
    assert by_name["respond"][sc.GT_ANSWER_TEXT] == "X"
    assert by_name["respond"][sc.GT_ANSWER_CONFIDENCE] == 0.4
    assert by_name["streamed"][sc.GT_ANSWER_TEXT] == "Hello"


def test_select_ids_and_evidence(traces: Traces) -> None:
    @gt.select
    def pick_ids(evidence: list[dict[str, Any]]) -> list[str]:
        return ["d2", "d1"]

    @gt.select(name="pick_items")
    def pick_items(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return evidence[:1]

    pick_ids([])
    pick_items([{"id": "d5", "content": "c"}, {"id": "d6"}])
    spans = {s.name: s.attributes for s in traces.spans()}
    assert tuple(spans["pick_ids"][sc.GT_SELECTED_IDS]) == ("d2", "d1")
    assert tuple(spans["pick_items"][sc.GT_SELECTED_IDS]) == ("d5",)


def test_tool_recording(traces: Traces, tmp_path: Any) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("Return policy: 30 days")

    @gt.tool(paths=("path",), paths_hook=lambda args, result: ["index:" + args["path"]])
    def read_document(path: str, call_id: str | None = None, limit: int = 10) -> str:
        return open(path).read()

    out = read_document(str(doc), call_id="call_1", limit=5)
    attrs = traces.one("TOOL").attributes
    assert attrs[sc.GT_TOOL_NAME] == "read_document"
    assert attrs[sc.GT_TOOL_CALL_ID] == "call_1"
    assert attrs[sc.GENAI_TOOL_CALL_ID] == "call_1"
    assert json.loads(str(attrs[sc.GT_TOOL_ARGUMENTS])) == {"path": str(doc), "limit": 5}
    assert attrs[sc.GENAI_TOOL_CALL_ARGUMENTS] == attrs[sc.GT_TOOL_ARGUMENTS]
    assert attrs[sc.GT_TOOL_STATUS] == "ok"
    assert tuple(attrs[sc.GT_TOOL_PATHS_READ]) == (str(doc), f"index:{doc}")
    assert attrs[sc.GT_TOOL_RESULT_SIZE] == len(out)
    assert attrs[sc.GT_TOOL_RESULT_HASH] == "sha256:" + hashlib.sha256(out.encode()).hexdigest()
    assert attrs[sc.GT_TOOL_RESULT_CONTENT] == out
    assert attrs[sc.GENAI_TOOL_CALL_RESULT] == out


def test_tool_errors_and_timeouts(traces: Traces) -> None:
    @gt.tool(paths=("path",))
    def read(path: str) -> str:
        raise FileNotFoundError(path)

    @gt.tool
    async def slow() -> str:
        raise TimeoutError("too slow")

    with pytest.raises(FileNotFoundError):
        read("/missing")
    import asyncio

    with pytest.raises(TimeoutError):
        asyncio.run(slow())
    spans = {s.name: s.attributes for s in traces.spans()}
    failed = spans["execute_tool read"]
    assert failed[sc.GT_TOOL_STATUS] == "error"
    assert failed[sc.GT_TOOL_ERROR_TYPE] == "FileNotFoundError"
    assert failed[sc.ERROR_TYPE] == "FileNotFoundError"
    assert sc.GT_TOOL_PATHS_READ not in failed  # nothing was read
    timed_out = spans["execute_tool slow"]
    assert timed_out[sc.GT_TOOL_STATUS] == "timeout"
    assert timed_out[sc.GT_TOOL_ERROR_TYPE] == "TimeoutError"


def test_tool_capture_off_keeps_hash_not_content(traces: Traces) -> None:
    traces.settings(capture=frozenset())

    @gt.tool
    def run(cmd: str) -> dict[str, Any]:
        return {"stdout": "private"}

    run("ls")
    attrs = traces.one("TOOL").attributes
    assert sc.GT_TOOL_ARGUMENTS not in attrs and sc.GT_TOOL_RESULT_CONTENT not in attrs
    assert sc.GENAI_TOOL_CALL_RESULT not in attrs
    text = json.dumps({"stdout": "private"}, separators=(",", ":"))
    assert attrs[sc.GT_TOOL_RESULT_HASH] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_verify_and_infer_io(traces: Traces) -> None:
    @gt.verify
    def check(answer: str) -> bool:
        return answer == "ok"

    @gt.infer
    def hop(entity: str) -> dict[str, str]:
        return {"next": entity + "!"}

    check("ok")
    hop("Jaws")
    spans = {s.name: s.attributes for s in traces.spans()}
    assert spans["check"][sc.OI_OUTPUT_VALUE] == "true"
    assert json.loads(str(spans["check"][sc.OI_INPUT_VALUE])) == {"answer": "ok"}
    assert json.loads(str(spans["hop"][sc.OI_OUTPUT_VALUE])) == {"next": "Jaws!"}


def test_streamed_retrieval_records_yielded_items(traces: Traces) -> None:
    traces.settings(max_evidence_items=2)

    @gt.retrieve
    def stream(query: str):  # type: ignore[no-untyped-def]
        yield {"id": "a"}
        yield {"id": "b"}
        yield {"id": "c"}

    assert [d["id"] for d in stream("q")] == ["a", "b", "c"]
    attrs = traces.one("RETRIEVE").attributes
    assert [d["id"] for d in json.loads(str(attrs[sc.GT_EVIDENCE]))] == ["a", "b"]
    assert attrs[sc.GT_EVIDENCE_COUNT] == 3
    assert sc.GT_EVIDENCE in attrs[sc.GT_TRUNCATED]
