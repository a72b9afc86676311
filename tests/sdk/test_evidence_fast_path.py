"""The plain-dict evidence fast path writes exactly what the general path writes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groundtrace.sdk as gt
from groundtrace.sdk import _record_evidence, _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._record import Recorder
from groundtrace.sdk._record_evidence import normalize_item, record_evidence
from groundtrace.sdk._record_evidence_plain import plain_evidence
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
COLUMN_TYPES = {
    "id": st.text(max_size=8),
    "chunk_id": st.text(max_size=8),
    "title": st.text(max_size=12),
    "path": st.text(max_size=12),
    "rank": st.integers(min_value=-5, max_value=50),
    "score": st.floats(allow_nan=False, allow_infinity=False),
    "relevance_score": st.floats(),
    "version": st.text(max_size=4),
    "content": st.text(max_size=60),
    "text": st.text(max_size=60),
}
uniform = st.lists(st.sampled_from(sorted(COLUMN_TYPES)), unique=True, max_size=7).flatmap(
    lambda keys: st.lists(
        st.fixed_dictionaries({k: COLUMN_TYPES[k] for k in ["id", *keys] if k}), max_size=8
    )
)
evidence = st.one_of(st.lists(plain_item, max_size=6), same_shape, uniform)


def _general(rec: Recorder, value: object, action: sc.Action, monkeypatch: Any) -> None:
    with monkeypatch.context() as patch:
        # neither the compiled builders (tried inside plain_evidence) nor the plain loop
        patch.setattr(_record_evidence, "plain_evidence", lambda *args, **kwargs: None)
        record_evidence(rec, value, action)


def _both(
    value: object,
    action: sc.Action,
    monkeypatch: Any,
    **changes: Any,
) -> tuple[Recorder, Recorder]:
    base = _runtime.Settings(capture=_runtime.CONTENT_FIELDS)
    current = _runtime.Settings(**{**{f: getattr(base, f) for f in ("capture",)}, **changes})
    fast, general = Recorder(current), Recorder(current)
    record_evidence(fast, value, action)
    _general(general, value, action, monkeypatch)
    return fast, general


def _both_in_hypothesis(
    items: list[Any], action: sc.Action, capture: bool, **settings: Any
) -> tuple[Recorder, Recorder]:
    """:func:`_both` with its own monkeypatch (hypothesis tests cannot use the fixture)."""
    patch = pytest.MonkeyPatch()
    try:
        return _both(
            items,
            action,
            patch,
            capture=_runtime.CONTENT_FIELDS if capture else frozenset(),
            **settings,
        )
    finally:
        patch.undo()


def _same(fast: Recorder, general: Recorder) -> None:
    # same attributes, same order (final() adds the truncation/redaction lists to both)
    assert list(fast.final().items()) == list(general.final().items())


@settings(max_examples=300, deadline=None)
@given(
    items=evidence,
    action=st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
    capture=st.booleans(),
    max_length=st.sampled_from([8, 40, 32_768]),
    max_items=st.sampled_from([0, 2, 100]),
)
def test_fast_path_matches_general_path(
    items: list[dict[str, Any]],
    action: sc.Action,
    capture: bool,
    max_length: int,
    max_items: int,
) -> None:
    fast, general = _both_in_hypothesis(
        items, action, capture, max_attribute_length=max_length, max_evidence_items=max_items
    )
    _same(fast, general)
    json.loads(str(fast.attrs[sc.GT_EVIDENCE]))


@settings(max_examples=200, deadline=None)
@given(item=plain_item, position=st.integers(min_value=0, max_value=5))
def test_plain_normalisation_matches_general_reader(item: dict[str, Any], position: int) -> None:
    class NotADict(dict[str, Any]):
        pass

    fast = normalize_item(item, position)
    general = normalize_item(NotADict(item), position)  # a dict subclass takes the general path
    assert fast.id == general.id
    assert fast.rank == general.rank
    assert (fast.title, fast.source, fast.version, fast.content) == (
        general.title,
        general.source,
        general.version,
        general.content,
    )
    assert fast.score == general.score or (
        fast.score is not None and general.score is not None and math.isnan(fast.score)
    )
    assert fast.metadata == general.metadata


def test_common_retriever_output_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [
        {"id": f"d{i}", "title": f"T{i}", "content": 'text é \u2028 "q"', "score": 1.0 / (i + 1)}
        for i in range(5)
    ] + [{"chunk_id": 7, "text": "x", "lang": "en", "page": 3, "relevance_score": "0.5"}]
    current = _runtime.Settings(capture=_runtime.CONTENT_FIELDS)
    rec = Recorder(current)
    assert plain_evidence(rec, items, sc.OI_RETRIEVAL_DOCUMENTS, True, True, len(items))

    fast, general = _both(items, sc.Action.RETRIEVE, monkeypatch)
    _same(fast, general)
    assert fast.attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 5, sc.OI_DOCUMENT_ID)] == "7"
    meta = json.loads(
        str(fast.attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 5, "document.metadata")])
    )
    assert meta == {"rank": 6, "lang": "en", "page": 3}


def test_inputs_the_fast_path_declines(monkeypatch: pytest.MonkeyPatch) -> None:
    nested = [{"id": "a", "metadata": {"title": "from meta"}}]
    hashed = [{"id": "a", "content_hash": "mine"}]
    long_text = [{"id": "a", "content": "x" * 50}]
    settings_ = _runtime.Settings(capture=_runtime.CONTENT_FIELDS, max_attribute_length=20)
    for items, current in (
        (nested, _runtime.Settings()),
        (hashed, _runtime.Settings()),
        (long_text, settings_),
        ([("a", 1.0)], _runtime.Settings()),
    ):
        assert not plain_evidence(Recorder(current), items, "p", True, True, 1)
    masked = _runtime.Settings(capture=_runtime.CONTENT_FIELDS, redact=Redactor())
    secret = [{"id": "a", "content": "mail me at someone@example.com"}]
    assert not plain_evidence(Recorder(masked), secret, "p", True, True, 1)
    fast, general = _both(secret, sc.Action.RETRIEVE, monkeypatch, redact=Redactor())
    _same(fast, general)
    assert "someone@example.com" not in str(fast.attrs[sc.GT_EVIDENCE])


def test_many_documents_beyond_the_precomputed_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{"id": str(i), "content": "c", "score": i} for i in range(300)]
    fast, general = _both(items, sc.Action.RERANK, monkeypatch, max_evidence_items=200)
    _same(fast, general)
    key = sc.indexed(sc.OI_RERANKER_OUTPUT_DOCUMENTS, 199, sc.OI_DOCUMENT_ID)
    assert fast.attrs[key] == "199"
    assert fast.final()[sc.GT_TRUNCATED] == [sc.GT_EVIDENCE]


def test_non_finite_scores_are_left_out_like_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = [{"id": "a", "score": math.nan}, {"id": "b", "score": math.inf}]
    fast, general = _both(items, sc.Action.RETRIEVE, monkeypatch)
    _same(fast, general)
    assert sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 0, sc.OI_DOCUMENT_SCORE) not in fast.attrs


@settings(max_examples=150, deadline=None)
@given(items=st.lists(plain_item, max_size=5))
def test_plain_ids_match_the_general_reader(items: list[dict[str, Any]]) -> None:
    from groundtrace.sdk._record_evidence import evidence_ids

    class NotADict(dict[str, Any]):
        pass

    assert evidence_ids(items) == evidence_ids([NotADict(i) for i in items])


def test_ids_of_dicts_with_nested_metadata_or_other_id_names() -> None:
    from groundtrace.sdk._record_evidence import evidence_ids

    items = [
        {"id": "x", "metadata": {"id": "y"}},
        {"metadata": {"id": "y"}},
        {"id": None, "doc_id": "z"},
        {"id": 7},
        {"content": "only text"},
    ]

    class NotADict(dict[str, Any]):
        pass

    ids = evidence_ids(items)
    assert ids == evidence_ids([NotADict(i) for i in items])
    assert ids[:4] == ["x", "y", "z", "7"]


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
    from types import MappingProxyType

    from groundtrace.sdk._record_answer import normalize_answer

    assert normalize_answer(value) == normalize_answer(MappingProxyType(value))


CANONICAL = {
    "id": st.text(max_size=8),
    "title": st.text(max_size=12),
    "source": st.text(max_size=12),
    "rank": st.integers(min_value=-5, max_value=50),
    "score": st.floats(allow_nan=False, allow_infinity=False),
    "version": st.text(max_size=4),
    "content": st.text(max_size=60),
    "lang": st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
    "page": st.integers(min_value=0, max_value=500),
}
canonical_rows = (
    st.lists(st.sampled_from(sorted(CANONICAL)), unique=True, min_size=1, max_size=9)
    .flatmap(st.permutations)
    .flatmap(
        lambda keys: st.lists(
            st.fixed_dictionaries({k: CANONICAL[k] for k in keys}), min_size=1, max_size=7
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(
    items=canonical_rows,
    odd=st.one_of(st.none(), st.fixed_dictionaries({"id": st.integers()}), st.just("text")),
    action=st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
    capture=st.booleans(),
    max_length=st.sampled_from([8, 40, 32_768]),
)
def test_compiled_path_matches_general_path(
    items: list[dict[str, Any]],
    odd: object,
    action: sc.Action,
    capture: bool,
    max_length: int,
) -> None:
    # uniform dicts of the usual types take the compiled builder; an odd item (another
    # shape, a non-dict) makes it decline and the plain-dict loop or the general path write
    if odd is not None:
        items = [*items[:2], odd, *items[2:]]
    fast, general = _both_in_hypothesis(items, action, capture, max_attribute_length=max_length)
    _same(fast, general)


def test_common_retriever_output_takes_the_compiled_builder() -> None:
    from groundtrace.sdk._record_evidence_compiled import builder_for
    from groundtrace.sdk._record_evidence_plain import document_keys, plan_of

    items = [
        {"id": f"d{i}", "title": f"T{i}", "content": "x" * 50, "score": 1.0 / (i + 1)}
        for i in range(5)
    ]
    builder = builder_for(tuple(items[0]), True, True, plan_of)
    assert builder is not None
    table = document_keys(sc.OI_RETRIEVAL_DOCUMENTS, len(items))
    attrs: dict[str, Any] = {}
    assert builder(attrs, items, table, 32_768, 5)
    assert attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 4, sc.OI_DOCUMENT_ID)] == "d4"
    assert json.loads(str(attrs[sc.GT_EVIDENCE]))[0] == {
        "id": "d0",
        "rank": 1,
        "title": "T0",
        "score": 1.0,
        "length": 50,
        "content": "x" * 50,
    }
    assert attrs[sc.GT_EVIDENCE_COUNT] == 5
    assert json.loads(str(attrs[sc.GENAI_RETRIEVAL_DOCUMENTS]))[1] == {"id": "d1", "score": 0.5}
    # unusual values make it decline (the plain-dict loop takes them)
    assert not builder({}, [*items, {**items[0], "score": math.nan}], table, 32_768, 6)
    assert not builder({}, [{**items[0], "id": 7}], table, 32_768, 1)
    assert not builder({}, items, table, 10, 5)  # content over the size limit
    # shapes it does not take: nested metadata, two names for one field, own content_hash
    for shape in (("id", "metadata"), ("id", "doc_id"), ("id", "content_hash")):
        assert builder_for(shape, True, True, plan_of) is None


def test_keys_of_str_subclasses_read_like_str_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    class Key(str):
        pass

    items = [{Key("id"): f"d{i}", "content": "x", Key("lang"): "en", 3: "-"} for i in range(3)]
    fast, general = _both(items, sc.Action.RETRIEVE, monkeypatch)
    _same(fast, general)
    assert fast.attrs[sc.indexed(sc.OI_RETRIEVAL_DOCUMENTS, 2, sc.OI_DOCUMENT_ID)] == "d2"


def test_compiled_builders_embed_no_application_keys_in_code() -> None:
    from groundtrace.sdk._record_evidence_compiled import builder_for
    from groundtrace.sdk._record_evidence_plain import document_keys, plan_of

    key = '"); import os; ("'
    items = [{"id": "a", key: 1}, {"id": "b", key: 2}]
    builder = builder_for(tuple(items[0]), False, False, plan_of)
    assert builder is not None
    attrs: dict[str, Any] = {}
    assert builder(attrs, items, document_keys(sc.OI_RETRIEVAL_DOCUMENTS, 2), 32_768, 2)
    assert json.loads(str(attrs[sc.GT_EVIDENCE]))[1]["metadata"] == {key: 2}


@pytest.mark.parametrize(
    "odd",
    [
        {"id": "d3", "title": "t" * 50, "content": "c", "rank": 4},  # title over the limit
        {"id": "d3", "title": "t", "content": "c", "rank": 2**70},  # orjson raises on it
        {"id": "d3", "title": "t", "content": "c", "rank": True},  # a bool rank
        "a plain string",  # not a dict: the plain-dict loop declines too
    ],
)
@pytest.mark.parametrize("action", [sc.Action.RETRIEVE, sc.Action.RERANK])
def test_a_builder_declining_midway_leaves_what_the_general_path_writes(
    odd: object, action: sc.Action, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the compiled builder writes the keys of the first documents before it meets the odd
    # one; whichever path takes over writes them again, in place, with the same values
    items = [{"id": f"d{i}", "title": "t", "content": "c", "rank": i + 1} for i in range(3)]
    items.append(odd)  # type: ignore[arg-type]
    current = _runtime.Settings(capture=_runtime.CONTENT_FIELDS, max_attribute_length=40)
    fast, general = Recorder(current), Recorder(current)
    for rec in (fast, general):
        rec.attrs[sc.OI_INPUT_VALUE] = "q"  # written before the evidence, as a step does
    record_evidence(fast, items, action)
    _general(general, items, action, monkeypatch)
    _same(fast, general)
    assert next(iter(fast.attrs)) == sc.OI_INPUT_VALUE


@settings(max_examples=100, deadline=None)
@given(
    rows=canonical_rows,
    order=st.randoms(use_true_random=False),
    action=st.sampled_from([sc.Action.RETRIEVE, sc.Action.RERANK]),
    capture=st.booleans(),
)
def test_items_with_the_same_keys_in_another_order(
    rows: list[dict[str, Any]], order: Any, action: sc.Action, capture: bool
) -> None:
    # a builder of field keys only reads each key by name: any order of the same keys is
    # taken, and written exactly as the general path writes it
    items: list[dict[str, Any]] = []
    for row in rows:
        keys = list(row)
        order.shuffle(keys)
        items.append({k: row[k] for k in keys})
    fast, general = _both_in_hypothesis(items, action, capture)
    _same(fast, general)


def test_a_builder_of_field_keys_takes_them_in_any_order() -> None:
    from groundtrace.sdk._record_evidence_compiled import builder_for
    from groundtrace.sdk._record_evidence_plain import document_keys, plan_of

    items = [{"id": "a", "score": 1.0, "content": "x"}, {"content": "y", "id": "b", "score": 0.5}]
    builder = builder_for(tuple(items[0]), True, False, plan_of)
    assert builder is not None
    table = document_keys(sc.OI_RERANKER_OUTPUT_DOCUMENTS, 2)
    attrs: dict[str, Any] = {}
    assert builder(attrs, items, table, 32_768, 2)
    assert attrs[sc.indexed(sc.OI_RERANKER_OUTPUT_DOCUMENTS, 1, sc.OI_DOCUMENT_ID)] == "b"
    # another key set of the same size, or one key more, is declined
    assert not builder({}, [{"id": "a", "score": 1.0, "text": "x"}], table, 32_768, 1)
    assert not builder({}, [{**items[0], "lang": "en"}], table, 32_768, 1)


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
def test_a_steps_cached_builder_writes_what_the_general_path_writes(
    calls: list[tuple[list[Any], sc.Action, bool, int]], traces: Any
) -> None:
    # one decorated function per action, called with lists of changing shapes under
    # changing settings: the step's cached plan must never write anything else
    patch = pytest.MonkeyPatch()
    try:
        for items, action, capture, max_items in calls:
            traces.settings(
                capture=_runtime.CONTENT_FIELDS if capture else frozenset(),
                max_evidence_items=max_items,
            )
            traces.exporter.clear()
            _STEPS[action](items)
            span = traces.one()
            general = Recorder(_runtime.settings())
            _general(general, items, action, patch)
            expected = _evidence_attributes(general.final())
            assert _evidence_attributes(span.attributes) == expected
    finally:
        patch.undo()


def test_a_steps_cached_builder_steps_aside_for_mappers_and_maskers(traces: Any) -> None:
    class Chunk:
        def __init__(self, ident: str) -> None:
            self.ident = ident

    items = [{"id": "a", "content": "mail me at someone@example.com", "score": 1.0}]
    _STEPS[sc.Action.RETRIEVE](items)  # the step caches its builder for these settings
    gt.register_evidence_mapper(Chunk, lambda c: {"id": c.ident})
    try:
        traces.exporter.clear()
        _STEPS[sc.Action.RETRIEVE]([*items, Chunk("b")])
        ids = [d["id"] for d in json.loads(str(traces.one().attributes[sc.GT_EVIDENCE]))]
        assert ids == ["a", "b"]
    finally:
        gt.unregister_evidence_mapper(Chunk)
    traces.settings(redact=Redactor())  # new settings: the cached plan is not used
    traces.exporter.clear()
    _STEPS[sc.Action.RETRIEVE](items)
    assert "someone@example.com" not in str(traces.one().attributes[sc.GT_EVIDENCE])
