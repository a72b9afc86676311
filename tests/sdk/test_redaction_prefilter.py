"""The redactor's first pass: the anchors of every masker looked for at once.

Text holding no anchor of any masker (most prose) is left as it is after one pass over it, no
trigger evaluated and no pattern scanned; what is masked is exactly what the maskers find
without that pass. ``tests/fixtures/redaction_table.json`` holds 600 texts (prose, digit runs,
tokens, every secret example of these tests whole, cut, upper- and lower-cased) with what the
redactor masked in them before the first pass existed (commit bc4e61e): the redactor must
still give exactly that.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._record import Recorder
from groundtrace.sdk._runtime import Settings
from groundtrace.sdk.redaction import BUILTIN_MASKERS, FunctionMasker, PatternMasker, Redactor

from .conftest import Traces
from .test_redaction import NEGATIVE, POSITIVE
from .test_redaction_secrets import EXAMPLES

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "redaction_table.json"
REDACTOR = Redactor()
#: The built-in maskers without anchors: only their triggers rule text out (the redactor as
#: it was before the first pass), the reference the first pass must never change.
REFERENCE = Redactor(
    dataclasses.replace(m, anchors="", min_anchors=1) for m in BUILTIN_MASKERS.values()
)
PROSE = "A short paragraph of evidence text. " * 6


def test_the_masking_of_600_texts_is_what_it_was_before_the_first_pass() -> None:
    rows = json.loads(TABLE.read_text(encoding="utf-8"))
    assert len(rows) == 600
    assert sum(1 for _, _, names in rows if names) > 250  # most hold a find
    assert {name for _, _, names in rows for name in names} == set(BUILTIN_MASKERS)
    differ = [
        (text, masked, names, REDACTOR(text))
        for text, masked, names in rows
        if REDACTOR(text) != (masked, tuple(names))
    ]
    assert differ == []


SECRETS = [text for _, text, _ in POSITIVE] + [text for _, text, _ in EXAMPLES] + NEGATIVE


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """Texts made of secret examples (whole or cut), their neighbours and odd characters."""
    piece = st.one_of(
        st.sampled_from(SECRETS).flatmap(
            lambda s: st.tuples(st.integers(0, len(s)), st.integers(0, len(s))).map(
                lambda ab: s[min(ab) : max(ab)] if ab[0] != ab[1] else s
            )
        ),
        st.text(
            alphabet="abcxyzBKSCAJGZbz_-/:=@.,;'\"\\ \n0123456789éſKİ٣\u212a",
            max_size=30,
        ),
        st.sampled_from(["Bearer ", "authorization: basic ", "password=", "://u:", "ghp_", "AKIA"]),
    )
    return "".join(draw(st.lists(piece, max_size=6)))


@settings(max_examples=300, deadline=None)
@given(text=_texts())
def test_the_first_pass_never_changes_what_is_masked(text: str) -> None:
    assert REDACTOR(text) == REFERENCE(text)
    if not REDACTOR.may_change(text):
        assert REDACTOR(text) == (text, ())


@pytest.mark.parametrize(("name", "text", "secret"), POSITIVE + EXAMPLES)
def test_every_secret_example_holds_its_maskers_anchors(name: str, text: str, secret: str) -> None:
    masker = BUILTIN_MASKERS[name]
    assert sum(text.count(a) for a in masker.anchors) >= masker.min_anchors
    assert REDACTOR.may_change(text)


def _counting(calls: list[str]) -> Redactor:
    """The built-in maskers, each trigger noting its masker's name when evaluated."""

    def counted(masker: PatternMasker) -> PatternMasker:
        trigger = masker.trigger

        def note(text: str) -> bool:
            calls.append(masker.name)
            return trigger is None or trigger(text)

        return dataclasses.replace(masker, trigger=note)

    return Redactor(counted(m) for m in BUILTIN_MASKERS.values())


def test_prose_without_anchors_costs_one_pass_and_no_trigger() -> None:
    calls: list[str] = []
    redactor = _counting(calls)
    for text in (PROSE, "q?", "Title 0", "the 7 steps in the manual", "naïve café, 北京"):
        assert not redactor.may_change(text)
        assert redactor(text) == (text, ())
    assert calls == []  # no trigger evaluated (one digit is not a number: they need two)
    assert redactor("Title 12") == ("Title 12", ())
    assert set(calls) == {"iban", "credit_card", "us_ssn", "uk_nino", "phone"}


def test_an_anchor_lets_in_only_the_maskers_it_belongs_to() -> None:
    calls: list[str] = []
    redactor = _counting(calls)
    assert redactor("mail al@example.com") == ("mail [REDACTED:email]", ("email",))
    assert set(calls) == {"email", "url_password"}  # the two maskers anchored on "@"
    calls.clear()
    assert redactor("the auth token is in the vault: ask") == (
        "the auth token is in the vault: ask",
        (),
    )
    assert calls == ["secret"]  # anchored on ":" (and "="): its trigger rules the text out


def test_a_masker_without_anchors_is_always_considered() -> None:
    ticket = PatternMasker("ticket", r"\bticket\b")
    upper = PatternMasker("upper", r"ÉTÉ", anchors="É")  # not ASCII: always considered
    shout = FunctionMasker("shout", lambda t: t.replace("hello", "[x]"))
    for extra in (ticket, upper, shout):
        redactor = Redactor.default().with_maskers(extra)
        assert redactor.may_change("plain words")
    assert Redactor([ticket])("a ticket here") == ("a [REDACTED:ticket] here", ("ticket",))
    assert Redactor([upper])("en ÉTÉ") == ("en [REDACTED:upper]", ("upper",))
    assert Redactor([shout])("hello") == ("[x]", ("shout",))
    # a custom masker with anchors is left out of text without them
    anchored = PatternMasker("hash", r"#\d+", anchors="#")
    assert not Redactor([anchored]).may_change("issue 42")
    assert Redactor([anchored])("issue #42") == ("issue [REDACTED:hash]", ("hash",))


def test_text_that_does_not_encode_is_scanned_all_the_same() -> None:
    lone = "\ud800 password=hunter22 \udfff"
    assert REDACTOR(lone) == ("\ud800 password=[REDACTED:secret] \udfff", ("secret",))
    assert not REDACTOR.may_change("\ud800 plain")
    assert not REDACTOR.may_change("")


def test_a_span_of_prose_evidence_is_recorded_as_with_redaction_off(traces: Traces) -> None:
    docs = [{"id": f"d{i}", "title": f"Title {i}", "content": PROSE} for i in range(3)]

    @gt.retrieve(retriever="bm25")
    def retrieve(query: str) -> list[dict[str, str]]:
        return docs

    recorded = []
    for redact in (None, REDACTOR):
        traces.settings(redact=redact)
        retrieve("q?")
        recorded.append(dict(traces.spans()[-1].attributes or {}))
    assert recorded[0] == recorded[1]
    docs.append({"id": "d3", "title": "Mail", "content": "write to al@example.com"})
    retrieve("q?")
    on = dict(traces.spans()[-1].attributes or {})
    assert on[sc.GT_REDACTED] == ("email",)
    assert "al@example.com" not in json.dumps(on)


def test_the_recorder_skips_the_maskers_for_text_without_anchors() -> None:
    seen: list[str] = []

    class Spy(Redactor):
        def __call__(self, text: str) -> tuple[str, tuple[str, ...]]:
            seen.append(text)
            return super().__call__(text)

    rec = Recorder(Settings(redact=Redactor.default()))
    assert rec.text("k", PROSE) == PROSE
    assert rec.text("k", "bob@example.com") == "[REDACTED:email]"
    assert rec.fired == {"email"}
    spied = Recorder(Settings(redact=Spy()))  # not the built-in type: always called
    assert spied.text("k", PROSE) == PROSE
    assert seen == [PROSE]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="0123456789 ().+-ABGQ,x\n٣é", max_size=40))
def test_the_number_triggers_look_first_for_what_their_regex_needs(text: str) -> None:
    from groundtrace.sdk import redaction as r

    run = r._NUMBERISH.search(text) is not None
    assert r._has_number_run(text) == run
    assert r._has_iban_start(text) == (r._IBAN_START.search(text) is not None)
    assert r._has_nino_start(text) == (r._NINO_START.search(text) is not None and run)


@pytest.mark.parametrize(
    "text",
    [
        "AUTHORIZATION: BASIC YTpi",  # the only anchor: an upper-case Z
        "authorization: basic YTpi",
        "BEARER ABCDEFGHIJKLMNOPQR",  # an upper-case B
        "bearer abcdefghijklmnopqr",
        "PASSWORD=HUNTER22",
        "pwd: hunter22",
    ],
)
def test_each_case_of_an_anchor_lets_its_masker_in(text: str) -> None:
    masked, names = REDACTOR(text)
    assert len(names) == 1
    assert masked != text
    assert REDACTOR(text) == REFERENCE(text)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.one_of(_texts(), st.sampled_from(["", "\0", "1\x002", "Title 3"]))))
def test_the_texts_of_a_span_are_looked_at_in_one_pass_each_as_on_its_own(
    texts: list[str],
) -> None:
    assert REDACTOR.may_change_each(texts) == [REDACTOR.may_change(t) for t in texts]
    custom = Redactor.default().with_maskers(FunctionMasker("x", str.upper))
    assert custom.may_change_each(texts) == [bool(t) for t in texts]


def test_two_digits_of_two_texts_are_not_a_number_of_either() -> None:
    # one pass over "Title 1" and "Title 2" together sees two digits: each text holds one
    assert REDACTOR.may_change_each(["Title 1", "Title 2", "", "Title 12", "no 123456"]) == [
        False,
        False,
        False,
        False,  # two digits let the number maskers in; their triggers need a run of six
        True,
    ]
    # a text holding the separator itself: each text is looked at on its own
    texts = ["123456\x00", "A3TX0123456789ABCDEF", "3"]
    assert REDACTOR.may_change_each(texts) == [True, True, False]


def test_one_digit_lets_in_only_the_maskers_that_need_one() -> None:
    calls: list[str] = []
    redactor = _counting(calls)
    # "3" of the AWS prefix A3T lets in the AWS masker alone (the number maskers need two
    # digits), whose trigger rules the text out: masking cannot change it
    assert not redactor.may_change("Title 3")
    assert calls == ["aws_access_key"]
    calls.clear()
    assert redactor("Title 3") == ("Title 3", ())
    assert calls == ["aws_access_key"]
    assert redactor.may_change_each(["Title 3", "Title 4"]) == [False, False]
    key = "id A3TX0123456789ABCDEF"  # the same anchor, and the trigger fires
    assert redactor.may_change(key)
    assert redactor.may_change_each(["Title 3", key]) == [False, True]
    assert redactor(key) == ("id [REDACTED:aws_access_key]", ("aws_access_key",))


def test_evidence_text_no_trigger_fires_on_never_reaches_the_maskers(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    masking = Redactor.__call__

    def spying(self: Redactor, text: str) -> tuple[str, tuple[str, ...]]:
        seen.append(text)
        return masking(self, text)

    monkeypatch.setattr(Redactor, "__call__", spying)
    docs = [{"id": f"d{i}", "title": f"Title {i}", "content": PROSE} for i in range(5)]

    @gt.retrieve(retriever="bm25")
    def retrieve(query: str) -> list[dict[str, str]]:
        return docs

    traces.settings(redact=Redactor.default())
    retrieve("q?")
    assert seen == []  # "Title 3" holds an anchor of the AWS masker, not its prefix
    docs.append({"id": "d5", "title": "Title 3 by al@example.com", "content": PROSE})
    retrieve("q?")
    assert seen == ["Title 3 by al@example.com"]
    attributes = dict(traces.spans()[-1].attributes or {})
    assert attributes[sc.GT_REDACTED] == ("email",)
    assert "al@example.com" not in json.dumps(attributes)


def test_the_maskers_chosen_by_the_anchors_a_text_holds_are_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from groundtrace.sdk import redaction

    monkeypatch.setattr(redaction, "_PLANS", 2)
    redactor = Redactor()
    texts = ["Title 3", "al@example.com", "PIN 1234", "Title 3", "x@y.io and 4111111111111111"]
    for _ in range(2):
        assert [redactor(t) for t in texts] == [REFERENCE(t) for t in texts]
    assert 0 < len(redactor._plans) <= 2  # bounded: cleared when full
    long_key = "a:" * (redaction._PLAN_KEY + 1)  # more anchors than a remembered key holds
    assert redactor(long_key) == REFERENCE(long_key)
    assert all(len(key) <= redaction._PLAN_KEY for key in redactor._plans)


def test_a_span_gives_the_redactor_only_the_texts_holding_anchors(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    call = Redactor.__call__

    def spy(self: Redactor, text: str) -> tuple[str, tuple[str, ...]]:
        seen.append(text)
        return call(self, text)

    monkeypatch.setattr(Redactor, "__call__", spy)
    docs = [
        {"id": f"d{i}", "title": f"Title {i}", "source": "wiki", "content": PROSE} for i in range(3)
    ]
    docs.append({"id": "d3", "title": "Mail", "source": "mail", "content": "to al@example.com"})

    @gt.rerank
    def rerank(query: str) -> list[dict[str, str]]:
        return docs

    traces.settings(redact=REDACTOR)
    rerank("q?")
    assert seen == ["to al@example.com"]
    attrs = dict(traces.spans()[-1].attributes or {})
    assert attrs[sc.GT_REDACTED] == ("email",)
    assert attrs["reranker.output_documents.3.document.content"] == "to [REDACTED:email]"
    assert attrs["reranker.output_documents.0.document.content"] == PROSE


def test_a_json_text_is_let_through_by_its_anchors_alone() -> None:
    # numbers of a JSON text set off the number maskers' triggers over the whole text; its
    # string literals are masked run by run, so the first pass looks at the anchors alone
    text = '{"id": "d1", "score": 10.0, "title": "Title 3"}'
    assert not REDACTOR.may_change(text)  # a trigger fires on none of it
    assert REDACTOR.may_change(text, triggers=False)  # it holds anchors
    assert not REDACTOR.may_change("plain words", triggers=False)
    rec = Recorder(Settings(redact=Redactor.default()))
    masked = '{"to": "al@example.com", "n": 4111111111111111}'
    assert (
        rec.text("k", masked, json_text=True) == '{"to": "[REDACTED:email]", "n": 4111111111111111}'
    )
