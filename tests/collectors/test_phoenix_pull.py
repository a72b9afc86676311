"""The Phoenix puller against Phoenix's REST span JSON, served through httpx.MockTransport.

The real server is exercised by tests/integration/test_phoenix_roundtrip.py; here the paging,
the mapping back of Phoenix's reshaping and the error paths are pinned down without it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from groundtrace.collectors.errors import TraceReadError
from groundtrace.collectors.phoenix import (
    fetch_phoenix_spans,
    phoenix_span_to_record,
    pull_phoenix_traces,
)
from groundtrace.collectors.spans import SourceLocation
from groundtrace.sdk import semconv as sc

TRACE = "6f9a1b2c3d4e5f60718293a4b5c6d7e8"
LOC = SourceLocation("phoenix:test", 1)


def phoenix_span(
    span_id: str,
    parent: str | None,
    kind: str,
    attributes: dict[str, Any],
    *,
    start: str = "2026-03-01T10:00:00.123456+00:00",
    end: str = "2026-03-01T10:00:01.000001+00:00",
) -> dict[str, Any]:
    """One span as Phoenix's GET /v1/projects/{p}/spans returns it (flattened attributes)."""
    return {
        "id": f"U3BhbjoxMg=={span_id}",
        "name": f"span-{span_id}",
        "context": {"trace_id": TRACE, "span_id": span_id},
        "span_kind": kind,
        "parent_id": parent,
        "start_time": start,
        "end_time": end,
        "status_code": "OK",
        "status_message": "",
        "attributes": attributes,
        "events": [],
    }


ROOT = phoenix_span(
    "00000000000000a1",
    None,
    "CHAIN",
    {
        sc.GT_ACTION: "REQUEST",
        sc.GT_REQUEST_QUERY: "Who directed Jaws?",
        sc.GT_SCHEMA_VERSION: sc.SCHEMA_VERSION,
    },
)
RETRIEVE = phoenix_span(
    "00000000000000b2",
    "00000000000000a1",
    "RETRIEVER",
    {
        sc.GT_ACTION: "RETRIEVE",
        sc.GT_EVIDENCE: json.dumps([{"id": "d1", "rank": 1, "score": 7.5, "content": "Jaws..."}]),
        sc.GT_EVIDENCE_COUNT: 1,
        # Phoenix parsed this JSON-string attribute into an object and flattened it on the way out
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_ID}": "d1",
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_SCORE}": 7.5,
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_METADATA}.source": "wiki",
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_METADATA}.tags": ["film", "1975"],
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_METADATA}.spans.0.start": 3,
        f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_METADATA}.spans.1.start": 9,
    },
)
ANSWER = phoenix_span(
    "00000000000000c3",
    "00000000000000a1",
    "UNKNOWN",  # Phoenix's value for "no span kind"
    {
        sc.GT_ACTION: "ANSWER",
        sc.GT_ANSWER_TEXT: "Steven Spielberg",
        sc.GT_ANSWER_CONFIDENCE: 0.9,
        sc.GT_ANSWER_CITED_IDS: ["d1"],
    },
)


def transport(
    pages: list[dict[str, Any]],
    seen: list[httpx.Request],
    annotations: dict[str, list[dict[str, Any]]] | None = None,
) -> httpx.MockTransport:
    """Phoenix's span pages, and its span / trace / document annotations (none by default)."""
    by_cursor = {None: pages[0], **{p["_cursor"]: p for p in pages[1:]}}
    served = annotations or {}

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        path = request.url.raw_path.split(b"?")[0]
        if path == b"/graphql":
            query = json.loads(request.content)["query"]
            nodes = {
                f"s{i}": {"documentEvaluations": served.get(f"documents:{gid}", [])}
                for i, gid in enumerate(re.findall(r'node\(id: "([^"]+)"\)', query))
            }
            return httpx.Response(200, json={"data": nodes})
        for kind in ("span", "trace"):
            if path == f"/v1/projects/my%20project/{kind}_annotations".encode():
                wanted = set(request.url.params.get_list(f"{kind}_ids"))
                rows = [a for a in served.get(kind, []) if a[f"{kind}_id"] in wanted]
                return httpx.Response(200, json={"data": rows, "next_cursor": None})
        if path != b"/v1/projects/my%20project/spans":
            return httpx.Response(404, json={"detail": "Project with name x not found"})
        page = by_cursor[request.url.params.get("cursor")]
        return httpx.Response(200, json={k: v for k, v in page.items() if k != "_cursor"})

    return httpx.MockTransport(handle)


def test_pages_are_followed_in_start_time_order_and_rebuilt_into_a_trace() -> None:
    pages = [
        {"data": [ROOT, RETRIEVE], "next_cursor": "c2"},
        {"_cursor": "c2", "data": [ANSWER], "next_cursor": None},
    ]
    seen: list[httpx.Request] = []
    with httpx.Client(transport=transport(pages, seen), base_url="http://phoenix") as client:
        traces = list(
            pull_phoenix_traces("http://phoenix", "my project", page_size=2, client=client)
        )
    spans = [r for r in seen if r.url.path.endswith("/spans")]
    assert [r.url.params.get("cursor") for r in spans] == [None, "c2"]
    assert all(
        r.url.params["sort"] == "start_time" and r.url.params["order"] == "asc" for r in spans
    )
    assert all(r.url.params["limit"] == "2" for r in spans)
    assert len(traces) == 1
    trace = traces[0]
    assert trace.trace_id == TRACE
    assert trace.request.query == "Who directed Jaws?"
    assert [(e.id, e.score) for e in trace.evidence] == [("d1", 7.5)]
    assert (trace.answer, trace.confidence, trace.cited_ids) == ("Steven Spielberg", 0.9, ("d1",))


def test_phoenix_reshaping_is_undone() -> None:
    record = phoenix_span_to_record(RETRIEVE, location=LOC)
    assert record.attributes[sc.OI_SPAN_KIND] == "RETRIEVER"
    metadata_key = f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_METADATA}"
    assert json.loads(str(record.attributes[metadata_key])) == {
        "source": "wiki",
        "tags": ["film", "1975"],
        "spans": [{"start": 3}, {"start": 9}],
    }
    assert not any(k.startswith(metadata_key + ".") for k in record.attributes)
    assert record.attributes[sc.GT_EVIDENCE_COUNT] == 1
    assert record.start_time_unix_nano == 1772359200_123456000
    assert record.end_time_unix_nano == 1772359201_000001000
    assert record.kind == "UNSPECIFIED"  # Phoenix does not serve the OTel span kind
    assert record.resource == {}
    answer = phoenix_span_to_record(ANSWER, location=LOC)
    assert sc.OI_SPAN_KIND not in answer.attributes  # UNKNOWN is Phoenix's default, not data
    root = phoenix_span_to_record(ROOT, location=LOC)
    assert root.parent_span_id is None and root.status.code == "OK"


def test_events_keep_their_time_and_attributes() -> None:
    span = dict(ROOT)
    span["events"] = [
        {
            "name": "exception",
            "timestamp": "2026-03-01T10:00:00.5+00:00",
            "attributes": {"exception": {"type": "ValueError", "message": "bad"}},
        }
    ]
    record = phoenix_span_to_record(span, location=LOC)
    assert record.events[0].name == "exception"
    assert record.events[0].time_unix_nano == 1772359200_500000000
    assert record.events[0].attributes == {
        "exception.type": "ValueError",
        "exception.message": "bad",
    }


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s.pop("context"), "context"),
        (lambda s: s["context"].update(span_id=""), "context.span_id"),
        (lambda s: s.update(start_time="yesterday"), "start_time"),
        (lambda s: s.update(status_code="MAYBE"), "status_code"),
        (lambda s: s.update(attributes=["not", "a", "map"]), "attributes"),
        (lambda s: s.update(events=[{"name": "e", "timestamp": 5}]), "events[0].timestamp"),
    ],
)
def test_malformed_spans_fail_closed_with_the_field(mutate: Any, field: str) -> None:
    span = json.loads(json.dumps(ROOT))
    mutate(span)
    with pytest.raises(TraceReadError) as info:
        phoenix_span_to_record(span, location=LOC)
    assert info.value.field == field
    assert info.value.path == "phoenix:test:1"


@pytest.mark.parametrize(
    ("response", "fragment"),
    [
        (httpx.Response(404, json={"detail": "Project with name x not found"}), "no such project"),
        (httpx.Response(500, text="boom"), "answered 500"),
        (httpx.Response(200, text="<html>"), "invalid JSON"),
        (httpx.Response(200, json={"items": []}), "no data list"),
        (httpx.Response(200, json={"data": [], "next_cursor": 7}), "bad next_cursor"),
    ],
)
def test_server_errors_are_trace_read_errors(response: httpx.Response, fragment: str) -> None:
    client = httpx.Client(transport=httpx.MockTransport(lambda request: response))
    with pytest.raises(TraceReadError, match=fragment) as info:
        list(fetch_phoenix_spans("http://phoenix", "p", client=client))
    assert info.value.path == "http://phoenix/v1/projects/p/spans"


def test_a_repeating_cursor_stops_instead_of_looping() -> None:
    page = {"data": [ROOT], "next_cursor": "same"}
    client = httpx.Client(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, json=page))
    )
    with pytest.raises(TraceReadError, match="bad next_cursor"):
        list(fetch_phoenix_spans("http://phoenix", "p", client=client, annotations=False))


def test_an_unreachable_phoenix_is_a_clear_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(transport=httpx.MockTransport(refuse))
    with pytest.raises(TraceReadError, match="cannot reach Phoenix"):
        list(fetch_phoenix_spans("http://127.0.0.1:9", "p", client=client))


def test_api_key_is_sent_as_bearer_token() -> None:
    seen: list[httpx.Request] = []
    pages = [{"data": [], "next_cursor": None}]
    with httpx.Client(transport=transport(pages, seen)) as client:
        list(fetch_phoenix_spans("http://phoenix", "my project", api_key="k-1", client=client))
    assert seen[0].headers["authorization"] == "Bearer k-1"


def _annotation(kind: str, target: str, name: str, **result: Any) -> dict[str, Any]:
    return {
        f"{kind}_id": target,
        "name": name,
        "annotator_kind": "CODE",
        "result": result,
        "metadata": {"source": "groundtrace", "evaluation": f"groundtrace.{name}"},
        "identifier": "groundtrace:q1",
        "updated_at": "2026-03-01T10:05:00+00:00",
    }


def test_span_trace_and_document_annotations_come_back_as_the_trace_evaluations() -> None:
    pages = [{"data": [ROOT, RETRIEVE, ANSWER], "next_cursor": None}]
    document = {
        "name": "role",
        "label": "necessary",
        "score": None,
        "explanation": None,
        "metadata": {},  # written by someone else: no evaluation name kept
        "documentPosition": 0,
        "updatedAt": "2026-03-01T10:05:00+00:00",
    }
    served = {
        "trace": [_annotation("trace", TRACE, "gate", label="promote")],
        "span": [_annotation("span", ANSWER["context"]["span_id"], "judge.adherence", score=0.5)],
        f"documents:{RETRIEVE['id']}": [document],
    }
    seen: list[httpx.Request] = []
    with httpx.Client(transport=transport(pages, seen, served)) as client:
        (trace,) = pull_phoenix_traces("http://phoenix", "my project", client=client)
    got = {(e.span_id, e.name, e.score_value, e.score_label) for e in trace.evaluations}
    assert got == {
        (ROOT["context"]["span_id"], "groundtrace.gate", None, "promote"),
        (ANSWER["context"]["span_id"], "groundtrace.judge.adherence", 0.5, None),
        (RETRIEVE["context"]["span_id"], "role", None, "necessary"),
    }
    asked = [r for r in seen if r.url.path.endswith("/span_annotations")]
    assert asked[0].url.params.get_list("exclude_annotation_names") == ["note"]
    graphql = [json.loads(r.content)["query"] for r in seen if r.url.path == "/graphql"]
    assert len(graphql) == 1 and RETRIEVE["id"] in graphql[0]  # only the retrieval span
    assert ROOT["id"] not in graphql[0]


def test_a_malformed_annotation_fails_closed() -> None:
    pages = [{"data": [ROOT], "next_cursor": None}]
    bad = _annotation("trace", TRACE, "gate", score="high")
    with httpx.Client(transport=transport(pages, [], {"trace": [bad]})) as client:
        with pytest.raises(TraceReadError, match="not a number") as info:
            list(pull_phoenix_traces("http://phoenix", "my project", client=client))
    assert "trace_annotations" in (info.value.path or "")


def test_document_annotations_keep_the_document_they_are_under() -> None:
    """Two annotations of one name on two documents of one retrieval span stay apart: each keeps
    its position and the id of the document there (none kept in metadata: written by others)."""
    retrieve = phoenix_span(
        "00000000000000b2",
        "00000000000000a1",
        "RETRIEVER",
        {
            sc.GT_ACTION: "RETRIEVE",
            f"{sc.OI_RETRIEVAL_DOCUMENTS}.0.{sc.OI_DOCUMENT_ID}": "d1",
            f"{sc.OI_RETRIEVAL_DOCUMENTS}.1.{sc.OI_DOCUMENT_ID}": "d2",
            f"{sc.OI_RETRIEVAL_DOCUMENTS}.2.{sc.OI_DOCUMENT_CONTENT}": "no id",
        },
    )

    def on(position: int, label: str, score: float) -> dict[str, Any]:
        return {
            "name": "relevance", "label": label, "score": score, "explanation": None,
            "metadata": {}, "documentPosition": position,
            "updatedAt": "2026-03-01T10:05:00+00:00",
        }  # fmt: skip

    served = {f"documents:{retrieve['id']}": [on(1, "irrelevant", 0.0), on(0, "relevant", 1.0),
                                              on(2, "relevant", 1.0)]}  # fmt: skip
    pages = [{"data": [ROOT, retrieve], "next_cursor": None}]
    with httpx.Client(transport=transport(pages, [], served)) as client:
        (trace,) = pull_phoenix_traces("http://phoenix", "my project", client=client)
    got = {
        (e.span_id, e.name, e.evidence_id, e.document_position, e.score_label, e.score_value)
        for e in trace.evaluations
    }
    span = retrieve["context"]["span_id"]
    assert got == {
        (span, "relevance", "d1", 0, "relevant", 1.0),
        (span, "relevance", "d2", 1, "irrelevant", 0.0),
        (span, "relevance", None, 2, "relevant", 1.0),  # no id there: the position tells it
    }


def test_a_document_annotation_without_a_position_fails_closed() -> None:
    bad = {"name": "role", "label": "x", "metadata": {}, "updatedAt": "2026-03-01T10:05:00Z"}
    pages = [{"data": [ROOT, RETRIEVE], "next_cursor": None}]
    served = {f"documents:{RETRIEVE['id']}": [bad]}
    with httpx.Client(transport=transport(pages, [], served)) as client:
        with pytest.raises(TraceReadError, match="without a document position") as info:
            list(pull_phoenix_traces("http://phoenix", "my project", client=client))
    assert info.value.field == "annotation.documentPosition"
