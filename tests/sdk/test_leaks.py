"""Nothing leaks past redaction: planted secrets are searched in the raw exported spans.

Every exported text of a span (attributes, status description, event attributes) is dumped
as the in-memory exporter holds it and searched for every planted secret: with content
capture on and default redaction none may appear, and with capture off none of the
user-supplied texts may be exported at all.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.sdk import rendering
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._runtime import CONTENT_FIELDS
from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor
from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor
from groundtrace.sdk.redaction import Redactor

from .conftest import Traces

EMAIL = "bob.smith@example.com"
CARD = "4111 1111 1111 1111"
KEY = "sk-proj-" + "Q7x9Lm2Vb8Nc4Zt1Rw6Ya3Pk"
SECRETS = (EMAIL, CARD, KEY)
NOTE = f"mail {EMAIL}, card {CARD}, key {KEY}"
REDACTOR = Redactor()


def _exported(traces: Traces) -> str:
    """Every text of every exported span, as one string."""
    dumped: list[Any] = []
    for span in traces.spans():
        dumped.append(dict(span.attributes or {}))
        dumped.append(span.status.description)
        dumped.extend(dict(event.attributes or {}) for event in span.events)
    return json.dumps(dumped, default=str, ensure_ascii=False)


def _assert_no_secret(traces: Traces) -> None:
    exported = _exported(traces)
    assert traces.spans()
    for secret in SECRETS:
        assert secret not in exported


@gt.answer(replayable=True)
def replayable_answer(question: str, evidence: list[str], *, note: str = "") -> str:
    return "ok"


def test_evidence_block_is_masked_as_the_messages_are(traces: Traces) -> None:
    traces.settings(redact=REDACTOR)
    evidence = [{"id": "d1", "title": f"for {EMAIL}", "content": NOTE}]

    @gt.answer
    def answer(question: str) -> str:
        prompt = rendering.build_prompt(question, evidence)
        return prompt.user

    user = answer("what is on file?")
    _assert_no_secret(traces)
    attrs = traces.one("ANSWER").attributes or {}
    block = str(attrs[sc.GT_PROMPT_EVIDENCE_BLOCK])
    assert "[REDACTED:email]" in block
    assert "email" in tuple(attrs[sc.GT_REDACTED])
    # the recorded block is found again in the masked messages, and edited there
    masked_messages = [{"role": "user", "content": REDACTOR(user)[0]}]
    edited = rendering.replace_evidence_block(masked_messages, block, "NEW")
    assert edited[0]["content"].startswith("NEW")


def test_document_metadata_values_are_masked(traces: Traces) -> None:
    traces.settings(redact=REDACTOR)

    @gt.retrieve
    def search(query: str) -> list[dict[str, Any]]:
        return [
            {
                "id": "d1",
                "content": "public text",
                "score": 0.4111111111111111,
                "metadata": {"owner": EMAIL, "notes": [{"card": CARD}], "key": KEY, "n": 7},
            }
        ]

    search("q")
    _assert_no_secret(traces)
    attrs = traces.one("RETRIEVE").attributes or {}
    meta = json.loads(str(attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_METADATA)]))
    assert meta["owner"] == "[REDACTED:email]"
    assert meta["notes"] == [{"card": "[REDACTED:credit_card]"}]
    assert meta["n"] == 7
    assert (
        attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_SCORE)] == 0.4111111111111111
    )
    evidence = json.loads(str(attrs[sc.GT_EVIDENCE]))
    assert evidence[0]["metadata"]["key"] == "[REDACTED:openai_key]"


@pytest.mark.parametrize("capture", [True, False])
def test_exception_messages_and_traces(traces: Traces, capture: bool) -> None:
    traces.settings(redact=REDACTOR, capture=CONTENT_FIELDS if capture else frozenset())

    @gt.tool
    def send(to: str) -> None:
        raise ValueError(NOTE)

    @gt.verify
    def check(answer: str) -> bool:
        raise KeyError(NOTE)

    for fn in (send, check):
        with pytest.raises((ValueError, KeyError)):
            fn("x")
    _assert_no_secret(traces)
    for span in traces.spans():
        (event,) = span.events
        assert event.name == sc.EXCEPTION_EVENT
        event_attrs = dict(event.attributes or {})
        assert event_attrs[sc.EXCEPTION_TYPE] in {"ValueError", "KeyError"}
        description = str(span.status.description)
        if capture:
            assert "[REDACTED:email]" in description
            assert "[REDACTED:credit_card]" in str(event_attrs[sc.EXCEPTION_STACKTRACE])
        else:
            assert description in {"ValueError", "KeyError"}
            assert set(event_attrs) == {sc.EXCEPTION_TYPE}


@pytest.mark.parametrize("capture", [True, False])
def test_replay_kwargs(traces: Traces, capture: bool) -> None:
    traces.settings(redact=REDACTOR, capture=CONTENT_FIELDS if capture else frozenset())
    replayable_answer("q", ["a"], note=NOTE)
    _assert_no_secret(traces)
    attrs = traces.one("ANSWER").attributes or {}
    if capture:
        kwargs = json.loads(str(attrs[sc.GT_REPLAY_KWARGS]))
        assert kwargs == {"note": REDACTOR(NOTE)[0]}
    else:
        assert sc.GT_REPLAY_KWARGS not in attrs
        assert sc.GT_REPLAY_ENTRYPOINT in attrs


class _RaisingToken:
    """A BM25 query token whose hash raises an error carrying the secrets."""

    __slots__ = ()

    def __hash__(self) -> int:
        raise ValueError(NOTE)

    def __eq__(self, other: object) -> bool:
        return self is other


@pytest.mark.parametrize("capture", [True, False])
def test_instrumentor_exceptions_are_masked_as_the_decorators_are(
    traces: Traces, capture: bool
) -> None:
    traces.settings(redact=REDACTOR, capture=CONTENT_FIELDS if capture else frozenset())
    refuse = httpx.MockTransport(
        lambda request: httpx.Response(400, json={"error": {"message": NOTE}})
    )
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://llm.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=refuse),
    )
    instrumentors = (OpenAIInstrumentor(), RankBM25Instrumentor())
    for instrumentor in instrumentors:
        instrumentor.instrument()
    try:
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ValueError):
            BM25Okapi([["a", "b"]]).get_scores([_RaisingToken()])
    finally:
        for instrumentor in instrumentors:
            instrumentor.uninstrument()
    assert len(traces.spans()) == 2
    _assert_no_secret(traces)
    for span in traces.spans():
        (event,) = span.events
        event_attrs = dict(event.attributes or {})
        assert event_attrs[sc.EXCEPTION_TYPE] in {"openai.BadRequestError", "ValueError"}
        assert (span.attributes or {})[sc.ERROR_TYPE] in {"BadRequestError", "ValueError"}
        if capture:
            assert "[REDACTED:email]" in str(event_attrs[sc.EXCEPTION_MESSAGE])
            assert "[REDACTED:openai_key]" in str(span.status.description)
            assert "email" in tuple((span.attributes or {})[sc.GT_REDACTED])
        else:
            assert set(event_attrs) == {sc.EXCEPTION_TYPE}
            assert span.status.description in {"BadRequestError", "ValueError"}
