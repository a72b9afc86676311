"""Evidence items read from what a step returned, and the attributes written for them."""

from __future__ import annotations

import json
import math
import random
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groundtrace.sdk as gt
from groundtrace.sdk import _evidence, _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._evidence import evidence_fields, evidence_ids, normalize_item
from groundtrace.sdk._evidence_attributes import record_evidence
from groundtrace.sdk._record import Recorder, content_id
from groundtrace.sdk.redaction import Redactor

FIELD_KEYS = [
    "id",
    "doc_id",
    "chunk_id",
    "key",
    "title",
    "name",
    "source",
    "path",
    "url",
    "rank",
    "position",
    "score",
    "relevance_score",
    "version",
    "revision",
    "content",
    "text",
    "body",
    "content_hash",
    "lang",
    "page",
    "metadata",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=8),
)
values = st.one_of(scalars, st.lists(st.integers(), max_size=2), st.just(["a", "b"]))
plain_item = st.dictionaries(st.sampled_from(FIELD_KEYS), values, max_size=7)
same_shape = st.lists(st.sampled_from(FIELD_KEYS), unique=True, max_size=6).flatmap(
    lambda keys: st.lists(st.fixed_dictionaries(dict.fromkeys(keys, values)), max_size=6)
)
evidence = st.one_of(st.lists(plain_item, max_size=6), same_shape)
CONTENT = _runtime.Settings(capture=_runtime.CONTENT_FIELDS)


def _doc(index: int, name: str, prefix: str = sc.OI_RETRIEVAL_DOCUMENTS) -> str:
    return sc.indexed(prefix, index, name)


def _recorded(
    items: object, action: sc.Action = sc.Action.RETRIEVE, **changes: Any
) -> dict[str, Any]:
    rec = Recorder(_runtime.Settings(**{"capture": _runtime.CONTENT_FIELDS, **changes}))
    record_evidence(rec, items, action)
    return rec.final()


@settings(max_examples=300, deadline=None)
@given(
    items=evidence,
    action=st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
    capture=st.booleans(),
    max_length=st.sampled_from([8, 40, 32_768]),
    max_items=st.sampled_from([0, 2, 100]),
)
def test_every_list_is_written_as_valid_json_within_the_limits(
    items: list[dict[str, Any]],
    action: sc.Action,
    capture: bool,
    max_length: int,
    max_items: int,
) -> None:
    attrs = _recorded(
        items,
        action,
        capture=_runtime.CONTENT_FIELDS if capture else frozenset(),
        max_attribute_length=max_length,
        max_evidence_items=max_items,
    )
    text = str(attrs[sc.GT_EVIDENCE])
    docs = json.loads(text)
    assert len(text) <= max(max_length, 2)
    assert len(docs) <= min(len(items), max_items)
    assert attrs[sc.GT_EVIDENCE_COUNT] == len(items)
    prefix = sc.OI_RERANKER_OUTPUT_DOCUMENTS if action is sc.Action.RERANK else None
    kept = min(len(items), max_items)
    for i, doc in enumerate(docs):  # the documents kept are the first ones, in order
        key = _doc(i, sc.OI_DOCUMENT_ID, prefix or sc.OI_RETRIEVAL_DOCUMENTS)
        assert attrs.get(key) == doc["id"]
    assert all(
        isinstance(attrs[_doc(i, "document.metadata", prefix or sc.OI_RETRIEVAL_DOCUMENTS)], str)
        for i in range(kept)
    )
    if len(items) > max_items:
        assert sc.GT_EVIDENCE in attrs[sc.GT_TRUNCATED]
    genai = sc.GENAI_RETRIEVAL_DOCUMENTS in attrs
    assert genai == (capture and action is sc.Action.RETRIEVE)


@settings(max_examples=200, deadline=None)
@given(item=plain_item, position=st.integers(min_value=0, max_value=5))
def test_a_dict_reads_like_any_other_mapping(item: dict[str, Any], position: int) -> None:
    class NotADict(dict[str, Any]):
        pass

    plain = normalize_item(item, position)
    for other in (NotADict(item), MappingProxyType(item)):
        read = normalize_item(other, position)
        assert (read.id, read.rank, read.title, read.source, read.version) == (
            plain.id,
            plain.rank,
            plain.title,
            plain.source,
            plain.version,
        )
        assert (read.content, read.metadata) == (plain.content, plain.metadata)
        assert read.score == plain.score or (
            plain.score is not None and read.score is not None and math.isnan(read.score)
        )


#: Field -> its names in priority order (the module docstring's table), for the fields whose
#: text values are kept as they are.
_TEXT_FIELDS = {
    "id": ("id", "doc_id", "document_id", "chunk_id", "_id", "key", "uid"),
    "title": ("title", "name", "heading"),
    "source": ("source", "path", "url", "uri", "file", "filename"),
    "version": ("version", "doc_version", "document_version", "revision"),
    "content": ("content", "text", "page_content", "body", "chunk", "passage"),
}
_NAMED = {name for names in _TEXT_FIELDS.values() for name in names}


def test_the_first_names_read_are_those_of_the_table() -> None:
    """A mapping's fields are read by the first name of each (written out in the reader)."""
    item = {names[0]: f"v{slot}" for slot, names in enumerate(_evidence._FIELD_NAMES)}
    item["metadata"] = {"lang": "en"}
    ev_id, rank, title, source, score, version, content, metadata = evidence_fields(item, 0)
    assert (ev_id, title, source, version, content) == ("v0", "v1", "v2", "v5", "v6")
    assert (rank, score, metadata) == (1, None, {"lang": "en"})  # "v3", "v4": not numbers
    assert _evidence._FIRST_NAMES == tuple(names[0] for names in _evidence._FIELD_NAMES)


@settings(max_examples=400, deadline=None)
@given(
    item=st.dictionaries(
        st.sampled_from(sorted(_NAMED | {"lang", "page", "content_hash", "Title"})),
        st.one_of(st.none(), st.text(max_size=6)),
        max_size=9,
    ),
    position=st.integers(min_value=0, max_value=3),
)
def test_fields_follow_the_documented_names_and_priorities(
    item: dict[str, str | None], position: int
) -> None:
    """The first name in priority order holding a value wins, whatever the keys' order; the
    other keys are the metadata, in the item's order."""
    picked = {
        field: next((item[n] for n in names if item.get(n) is not None), None)
        for field, names in _TEXT_FIELDS.items()
    }
    content = picked["content"]
    expected_id = picked["id"]
    if expected_id is None and content:
        expected_id = content_id(content)
    ev_id, rank, title, source, score, version, read, metadata = evidence_fields(item, position)
    assert (ev_id, title, source, version, read) == (
        expected_id,
        picked["title"],
        picked["source"],
        picked["version"],
        content,
    )
    assert (rank, score) == (position + 1, None)
    assert list(metadata.items()) == [(k, v) for k, v in item.items() if k not in _NAMED]


def test_common_retriever_output() -> None:
    items = [
        {"id": f"d{i}", "title": f"T{i}", "content": 'text é \u2028 "q"', "score": 1.0 / (i + 1)}
        for i in range(5)
    ] + [{"chunk_id": 7, "text": "x", "lang": "en", "page": 3, "relevance_score": "0.5"}]
    attrs = _recorded(items)
    assert attrs[_doc(5, sc.OI_DOCUMENT_ID)] == "7"
    assert attrs[_doc(5, sc.OI_DOCUMENT_SCORE)] == 0.5
    assert json.loads(str(attrs[_doc(5, "document.metadata")])) == {
        "rank": 6,
        "lang": "en",
        "page": 3,
    }
    assert json.loads(str(attrs[sc.GT_EVIDENCE]))[0] == {
        "id": "d0",
        "rank": 1,
        "title": "T0",
        "score": 1.0,
        "length": 12,
        "content": 'text é \u2028 "q"',
    }
    assert attrs[sc.GT_EVIDENCE_COUNT] == 6
    assert json.loads(str(attrs[sc.GENAI_RETRIEVAL_DOCUMENTS]))[1] == {"id": "d1", "score": 0.5}


def test_nested_metadata_own_hashes_long_texts_pairs_and_secrets() -> None:
    nested = _recorded([{"id": "a", "metadata": {"title": "from meta", "lang": "en"}}])
    assert json.loads(str(nested[sc.GT_EVIDENCE])) == [
        {
            "id": "a",
            "rank": 1,
            "title": "from meta",
            "metadata": {"title": "from meta", "lang": "en"},
        }
    ]
    hashed = _recorded([{"id": "a", "content_hash": "mine"}])
    assert json.loads(str(hashed[_doc(0, "document.metadata")])) == {
        "rank": 1,
        "content_hash": "mine",
    }
    clipped = _recorded([{"id": "a", "content": "x" * 50}], max_attribute_length=20)
    assert clipped[_doc(0, sc.OI_DOCUMENT_CONTENT)] == "x" * 20
    assert sc.GT_EVIDENCE in clipped[sc.GT_TRUNCATED]
    assert "content_hash" in json.loads(str(clipped[_doc(0, "document.metadata")]))
    pair = _recorded([("a", 1.0)])
    assert pair[_doc(0, sc.OI_DOCUMENT_SCORE)] == 1.0
    assert pair[_doc(0, sc.OI_DOCUMENT_CONTENT)] == "a"
    secret = _recorded(
        [{"id": "a", "content": "mail me at someone@example.com"}], redact=Redactor()
    )
    assert "someone@example.com" not in str(secret[sc.GT_EVIDENCE])
    assert "someone@example.com" not in str(secret[_doc(0, sc.OI_DOCUMENT_CONTENT)])
    assert secret[sc.GT_REDACTED]


def test_many_documents() -> None:
    items = [{"id": str(i), "content": "c", "score": i} for i in range(300)]
    attrs = _recorded(items, sc.Action.RERANK, max_evidence_items=200)
    assert attrs[_doc(199, sc.OI_DOCUMENT_ID, sc.OI_RERANKER_OUTPUT_DOCUMENTS)] == "199"
    assert _doc(200, sc.OI_DOCUMENT_ID, sc.OI_RERANKER_OUTPUT_DOCUMENTS) not in attrs
    assert attrs[sc.GT_TRUNCATED] == [sc.GT_EVIDENCE]
    assert attrs[sc.GT_EVIDENCE_COUNT] == 300


def test_non_finite_scores_are_left_out() -> None:
    attrs = _recorded([{"id": "a", "score": math.nan}, {"id": "b", "score": math.inf}])
    assert _doc(0, sc.OI_DOCUMENT_SCORE) not in attrs
    assert _doc(1, sc.OI_DOCUMENT_SCORE) not in attrs
    assert all("score" not in doc for doc in json.loads(str(attrs[sc.GT_EVIDENCE])))


def test_ids_of_dicts_with_nested_metadata_or_other_id_names() -> None:
    items = [
        {"id": "x", "metadata": {"id": "y"}},
        {"metadata": {"id": "y"}},
        {"id": None, "doc_id": "z"},
        {"id": 7},
        {"content": "only text"},
        "d9",
        3,
    ]
    ids = evidence_ids(items)
    assert ids[:4] == ["x", "y", "z", "7"]
    assert ids[4] == normalize_item({"content": "only text"}, 4).id
    assert ids[5:] == ["d9", "3"]
    assert evidence_ids(items, 2) == ["x", "y"]


@settings(max_examples=150, deadline=None)
@given(
    value=st.dictionaries(
        st.sampled_from(
            ["answer", "text", "confidence", "score", "used_chunks", "cited", "quotes"]
        ),
        values,
        max_size=5,
    )
)
def test_plain_dict_answers_read_like_mappings(value: dict[str, Any]) -> None:
    from groundtrace.sdk._record_answer import normalize_answer

    assert normalize_answer(value) == normalize_answer(MappingProxyType(value))


def test_keys_of_str_subclasses_read_like_str_keys() -> None:
    class Key(str):
        pass

    items = [{Key("id"): f"d{i}", "content": "x", Key("lang"): "en", 3: "-"} for i in range(3)]
    attrs = _recorded(items)
    assert attrs[_doc(2, sc.OI_DOCUMENT_ID)] == "d2"
    assert json.loads(str(attrs[_doc(2, "document.metadata")])) == {"rank": 3, "lang": "en"}


def test_application_keys_are_data() -> None:
    key = '"); import os; ("'
    attrs = _recorded([{"id": "a", key: 1}, {"id": "b", key: 2}])
    assert json.loads(str(attrs[sc.GT_EVIDENCE]))[1]["metadata"] == {key: 2}


@pytest.mark.parametrize("action", [sc.Action.RETRIEVE, sc.Action.RERANK])
def test_unusual_values_among_usual_ones(action: sc.Action) -> None:
    items: list[Any] = [
        {"id": f"d{i}", "title": "t", "content": "c", "rank": i + 1} for i in range(3)
    ]
    items += [
        {"id": "d3", "title": "t" * 50, "content": "c", "rank": 4},  # title over the limit
        {"id": "d4", "title": "t", "content": "c", "rank": 2**70},  # beyond 64 bits
        {"id": "d5", "title": "t", "content": "c", "rank": True},  # a bool is no rank
        "a plain string",
    ]
    rec = Recorder(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, max_attribute_length=1000))
    rec.attrs[sc.OI_INPUT_VALUE] = "q"  # written before the evidence, as a step does
    record_evidence(rec, items, action)
    attrs = rec.final()
    assert next(iter(attrs)) == sc.OI_INPUT_VALUE
    docs = json.loads(str(attrs[sc.GT_EVIDENCE]))
    assert [doc["rank"] for doc in docs] == [1, 2, 3, 4, 2**70, 6, 7]
    assert docs[6]["content"] == "a plain string"
    rec = Recorder(_runtime.Settings(capture=_runtime.CONTENT_FIELDS, max_attribute_length=40))
    record_evidence(rec, items[3:4], action)
    prefix = sc.OI_RERANKER_OUTPUT_DOCUMENTS if action is sc.Action.RERANK else None
    meta = rec.attrs[_doc(0, "document.metadata", prefix or sc.OI_RETRIEVAL_DOCUMENTS)]
    assert json.loads(str(meta))["title"] == "t" * 40
    assert rec.final()[sc.GT_TRUNCATED] == [sc.GT_EVIDENCE]


CANONICAL = {
    "id": st.text(max_size=8),
    "title": st.text(max_size=12),
    "source": st.text(max_size=12),
    "rank": st.integers(min_value=-5, max_value=50),
    "score": st.floats(allow_nan=False, allow_infinity=False),
    "version": st.text(max_size=4),
    "content": st.text(max_size=60),
}
canonical_rows = st.lists(st.sampled_from(sorted(CANONICAL)), unique=True, min_size=1).flatmap(
    lambda keys: st.lists(
        st.fixed_dictionaries({k: CANONICAL[k] for k in keys}), min_size=1, max_size=7
    )
)


@settings(max_examples=100, deadline=None)
@given(
    rows=canonical_rows,
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    action=st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
    capture=st.booleans(),
)
def test_items_with_the_same_fields_in_another_order(
    rows: list[dict[str, Any]], seed: int, action: sc.Action, capture: bool
) -> None:
    order = random.Random(seed)
    shuffled: list[dict[str, Any]] = []
    for row in rows:
        keys = list(row)
        order.shuffle(keys)
        shuffled.append({k: row[k] for k in keys})
    content = _runtime.CONTENT_FIELDS if capture else frozenset()
    assert _recorded(shuffled, action, capture=content) == _recorded(rows, action, capture=content)


_EVIDENCE_KEYS = (sc.GT_EVIDENCE, sc.GT_EVIDENCE_COUNT, sc.GENAI_RETRIEVAL_DOCUMENTS)


def _evidence_attributes(attributes: Any) -> list[tuple[str, Any]]:
    return [
        (k, list(v) if isinstance(v, tuple) else v)
        for k, v in attributes.items()
        if k in _EVIDENCE_KEYS
        or k.startswith((sc.OI_RETRIEVAL_DOCUMENTS, sc.OI_RERANKER_OUTPUT_DOCUMENTS))
        or k in (sc.GT_TRUNCATED, sc.GT_REDACTED)
    ]


def _returns(value: Any) -> Any:
    return value


_STEPS = {sc.Action.RETRIEVE: gt.retrieve(_returns), sc.Action.RERANK: gt.rerank(_returns)}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    calls=st.lists(
        st.tuples(
            st.one_of(evidence, canonical_rows),
            st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
            st.booleans(),
            st.sampled_from([2, 100]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_step_records_its_return_value_by_the_convention(
    calls: list[tuple[list[Any], sc.Action, bool, int]], traces: Any
) -> None:
    # one decorated function per action, called with lists of changing shapes under
    # changing settings: the span holds what the convention writes under those settings
    for items, action, capture, max_items in calls:
        traces.settings(
            capture=_runtime.CONTENT_FIELDS if capture else frozenset(),
            max_evidence_items=max_items,
        )
        traces.exporter.clear()
        _STEPS[action](items)
        span = traces.one()
        expected = Recorder(_runtime.settings())
        record_evidence(expected, items, action)
        assert _evidence_attributes(span.attributes) == _evidence_attributes(expected.final())


def test_mappers_and_maskers_apply_from_the_next_call(traces: Any) -> None:
    class Chunk:
        def __init__(self, ident: str) -> None:
            self.ident = ident

    items = [{"id": "a", "content": "mail me at someone@example.com", "score": 1.0}]
    _STEPS[sc.Action.RETRIEVE](items)
    gt.register_evidence_mapper(Chunk, lambda c: {"id": c.ident})
    try:
        traces.exporter.clear()
        _STEPS[sc.Action.RETRIEVE]([*items, Chunk("b")])
        ids = [d["id"] for d in json.loads(str(traces.one().attributes[sc.GT_EVIDENCE]))]
        assert ids == ["a", "b"]
    finally:
        gt.unregister_evidence_mapper(Chunk)
    traces.settings(redact=Redactor())
    traces.exporter.clear()
    _STEPS[sc.Action.RETRIEVE](items)
    assert "someone@example.com" not in str(traces.one().attributes[sc.GT_EVIDENCE])
