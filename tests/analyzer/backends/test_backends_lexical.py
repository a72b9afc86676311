"""The lexical extractive reader and its OpenAI-compatible endpoints."""

from __future__ import annotations

import json

import openai
import pytest

from groundtrace.analyzer.backends import LexicalServer, lexical_client
from groundtrace.analyzer.backends._lexical_prompt import parse_prompt
from groundtrace.analyzer.backends._lexical_reader import Chunk, read
from groundtrace.analyzer.backends._lexical_server import handle

JAWS = Chunk("d1", "Jaws (film)", "Jaws is a 1975 thriller film directed by Steven Spielberg.")
DUCKS = Chunk("d2", "Mallard", "The mallard is a dabbling duck that breeds in the Americas.")
PROMPT = (
    "Answer from the evidence only.\n\n"
    "[d1] Jaws (film)\nJaws is a 1975 thriller film directed by Steven Spielberg.\n\n"
    "[d2] Mallard\nThe mallard is a dabbling duck that breeds in the Americas.\n\n"
    "Question: Who directed the film Jaws?"
)


def test_reader_extracts_named_span_from_best_chunk() -> None:
    result = read("Who directed the film Jaws?", [DUCKS, JAWS])
    assert result.answer == "Steven Spielberg"
    assert result.used_chunks == ("d1",)
    assert 0.0 <= result.confidence <= 1.0


def test_reader_year_question_prefers_year() -> None:
    result = read("In what year was the film Jaws released?", [JAWS, DUCKS])
    assert result.answer == "1975"


def test_reader_answer_changes_when_evidence_removed() -> None:
    # the reader only reads the evidence: without the Jaws chunk it cannot name the director
    assert read("Who directed the film Jaws?", [DUCKS]).answer != "Steven Spielberg"
    assert read("Who directed the film Jaws?", []).used_chunks == ()


def test_reader_two_option_question_uses_years() -> None:
    a = Chunk("a", "Alice Smith", "Alice Smith (born 1950) is a painter.")
    b = Chunk("b", "Bob Jones", "Bob Jones (born 1970) is a sculptor.")
    assert read("Who is older, Alice Smith or Bob Jones?", [a, b]).answer == "Alice Smith"
    assert read("Who is younger, Alice Smith or Bob Jones?", [a, b]).answer == "Bob Jones"


def test_reader_yes_no_question() -> None:
    a = Chunk("a", "Ed Wood", "Ed Wood was an American filmmaker.")
    b = Chunk("b", "Scott Derrickson", "Scott Derrickson is an American filmmaker.")
    c = Chunk("c", "Lars Olsen", "Lars Olsen is a Danish footballer.")
    assert (
        read("Are Ed Wood and Scott Derrickson both American filmmakers?", [a, b]).answer == "yes"
    )
    assert read("Are Ed Wood and Lars Olsen both American filmmakers?", [a, c]).answer == "no"


def test_reader_is_deterministic() -> None:
    q = "Who directed the film Jaws?"
    assert read(q, [JAWS, DUCKS]) == read(q, [JAWS, DUCKS])


def test_parse_prompt_recovers_question_and_chunks() -> None:
    question, chunks = parse_prompt(PROMPT)
    assert question == "Who directed the film Jaws?"
    assert [c.id for c in chunks] == ["d1", "d2"]
    assert chunks[0].title == "Jaws (film)"
    assert chunks[1].text.startswith("The mallard")


def test_in_process_client_answers_json() -> None:
    client = lexical_client()
    reply = client.chat.completions.create(
        model="lexical", messages=[{"role": "user", "content": PROMPT}], temperature=0
    )
    payload = json.loads(reply.choices[0].message.content)
    assert payload == {
        "answer": "Steven Spielberg",
        "confidence": payload["confidence"],
        "used_chunks": ["d1"],
    }
    assert reply.usage is not None and reply.usage.prompt_tokens == len(PROMPT.split())


def test_http_server_serves_same_answer_and_stops() -> None:
    with LexicalServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
        models = client.models.list()
        reply = client.chat.completions.create(
            model="lexical", messages=[{"role": "user", "content": PROMPT}]
        )
        url = server.base_url
    in_process = lexical_client().chat.completions.create(
        model="lexical", messages=[{"role": "user", "content": PROMPT}]
    )
    assert [m.id for m in models.data]
    assert reply.choices[0].message.content == in_process.choices[0].message.content
    stopped = openai.OpenAI(base_url=url, api_key="local", max_retries=0, timeout=2)
    with pytest.raises(openai.APIConnectionError):
        stopped.models.list()


def test_bad_requests_get_openai_style_errors() -> None:
    status, body = handle("POST", "/v1/chat/completions", b"{not json")
    assert status == 400 and "error" in body
    status, body = handle("POST", "/v1/chat/completions", b'{"messages": [], "stream": true}')
    assert status == 400
    status, _ = handle("GET", "/v1/nothing", b"")
    assert status == 404
    with pytest.raises(openai.BadRequestError):
        lexical_client().chat.completions.create(model="x", messages=[], stream=True)


def test_parse_prompt_reads_sdk_rendering_and_skips_worked_example() -> None:
    from groundtrace.sdk.rendering import build_prompt

    example = "Example.\n[ex:0] Mallard\nA duck.\nQuestion: What is a mallard?\nAnswer: {}\n"
    evidence = [
        {"id": "c:0", "title": "Jaws (film)", "content": JAWS.text},
        {"id": "c:1", "title": "Mallard", "content": DUCKS.text},
    ]
    prompt = build_prompt(
        "Who directed the film Jaws?", evidence, instructions=example, record=False
    )
    question, chunks = parse_prompt(f"{prompt.system}\n\n{prompt.user}")
    assert question == "Who directed the film Jaws?"
    assert [(c.id, c.title) for c in chunks] == [("c:0", "Jaws (film)"), ("c:1", "Mallard")]
    assert chunks[0].text == JAWS.text
