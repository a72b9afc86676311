"""Exception text: captured only under the ``exceptions`` content kind, masked always.

An exception's message and stack trace can quote anything the failing code held (a tool's
argument, a header, a token): they are recorded only when ``exceptions`` is captured, and then
masked in ``exception.message``, ``exception.stacktrace`` and the status description alike, even
with redaction off. The exception's type is recorded whatever is captured.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._runtime import CONTENT_FIELDS, Content, Settings
from groundtrace.sdk.redaction import Redactor

from .conftest import Traces

#: The token families the issue found exported verbatim from exception text.
BASIC = base64.b64encode(b"deploy:Tr0ub4dor&3").decode()
SLACK = "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE = "sk_live_" + "51HbCd" * 5
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
LEAKS = [
    ("basic_auth", f"upstream refused headers {{'Authorization': 'Basic {BASIC}'}}", BASIC),
    ("slack_token", f"Slack post failed with token {SLACK}", SLACK),
    ("stripe_key", f"Stripe: invalid API key provided: {STRIPE}", STRIPE),
    ("google_api_key", f"GET https://maps.example/api?key={GOOGLE} failed", GOOGLE),
]
ARGUMENT = "Ms. Jane Roe, 12 Elm Street"  # a tool argument: no masker knows it


def _exported(traces: Traces) -> str:
    """Every text of every exported span, as one string."""
    dumped: list[Any] = []
    for span in traces.spans():
        dumped.append(dict(span.attributes or {}))
        dumped.append(span.status.description)
        dumped.extend(dict(event.attributes or {}) for event in span.events)
    return json.dumps(dumped, default=str, ensure_ascii=False)


def _event(traces: Traces) -> dict[str, Any]:
    (span,) = traces.spans()
    (event,) = span.events
    assert event.name == sc.EXCEPTION_EVENT
    return dict(event.attributes or {})


@gt.tool
def lookup(customer: str, note: str) -> None:
    raise LookupError(f"no account for {customer}: {note}")


@pytest.mark.parametrize(("name", "message", "secret"), LEAKS)
def test_a_token_in_exception_text_is_masked_everywhere(
    traces: Traces, name: str, message: str, secret: str
) -> None:
    traces.settings(redact=Redactor.default(), capture=CONTENT_FIELDS)

    @gt.retrieve
    def search(query: str) -> list[str]:
        raise RuntimeError(message)

    with pytest.raises(RuntimeError):
        search("q")
    assert secret not in _exported(traces)
    event = _event(traces)
    marker = f"[REDACTED:{name}]"
    assert marker in str(event[sc.EXCEPTION_MESSAGE])
    assert marker in str(event[sc.EXCEPTION_STACKTRACE])
    (span,) = traces.spans()
    assert marker in str(span.status.description)
    assert name in tuple((span.attributes or {})[sc.GT_REDACTED])


@pytest.mark.parametrize(
    "kinds",
    [
        frozenset({Content.QUERY}),
        frozenset({Content.TOOL_RESULTS, Content.ANSWER, Content.IO}),
        CONTENT_FIELDS - {Content.EXCEPTIONS},
    ],
)
def test_exception_text_is_not_captured_with_other_kinds(
    traces: Traces, kinds: frozenset[Content]
) -> None:
    traces.settings(redact=Redactor.default(), capture=kinds)
    with pytest.raises(LookupError):
        lookup(ARGUMENT, SLACK)
    if Content.TOOL_ARGUMENTS not in kinds:
        assert "Jane" not in _exported(traces)
    assert _event(traces) == {sc.EXCEPTION_TYPE: "LookupError"}
    (span,) = traces.spans()
    assert span.status.description == "LookupError"
    attrs = span.attributes or {}
    assert attrs[sc.ERROR_TYPE] == "LookupError"
    assert attrs[sc.GT_TOOL_ERROR_TYPE] == "LookupError"


def test_exception_text_is_captured_under_its_own_kind(traces: Traces) -> None:
    traces.settings(redact=Redactor.default(), capture=frozenset({Content.EXCEPTIONS}))
    with pytest.raises(LookupError):
        lookup(ARGUMENT, SLACK)
    event = _event(traces)
    message = f"no account for {ARGUMENT}: [REDACTED:slack_token]"
    assert event[sc.EXCEPTION_MESSAGE] == message
    assert message in str(event[sc.EXCEPTION_STACKTRACE])
    (span,) = traces.spans()
    assert span.status.description == f"LookupError: {message}"
    attrs = span.attributes or {}
    assert sc.GT_TOOL_ARGUMENTS not in attrs  # the arguments are still not captured
    assert attrs[sc.GT_REDACTED] == ("slack_token",)


def test_exception_text_is_masked_with_redaction_off(traces: Traces) -> None:
    traces.settings(redact=None, capture=frozenset({Content.EXCEPTIONS, Content.QUERY}))

    @gt.retrieve
    def search(query: str) -> list[str]:
        raise RuntimeError(f"{query} failed with {SLACK}")

    with pytest.raises(RuntimeError):
        search("mail bob@example.com")
    event = _event(traces)
    assert event[sc.EXCEPTION_MESSAGE] == "mail [REDACTED:email] failed with [REDACTED:slack_token]"
    assert SLACK not in _exported(traces)
    (span,) = traces.spans()
    attrs = span.attributes or {}
    assert "mail bob@example.com" in attrs.values()  # redaction off: the query as it is
    assert attrs[sc.GT_REDACTED] == ("email", "slack_token")


def test_a_custom_redactor_masks_exception_text(traces: Traces) -> None:
    custom = Redactor.builtins(["email"])
    traces.settings(redact=custom, capture=frozenset({Content.EXCEPTIONS}))
    with pytest.raises(LookupError):
        lookup("bob@example.com", "x")
    assert _event(traces)[sc.EXCEPTION_MESSAGE] == "no account for [REDACTED:email]: x"


@pytest.mark.parametrize(
    ("value", "captured"),
    [("exceptions", True), ("query,exceptions", True), ("query", False), ("true", True)],
)
def test_the_kind_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, captured: bool
) -> None:
    monkeypatch.setenv("GROUNDTRACE_CAPTURE_CONTENT", value)
    assert Settings.from_env().captures(Content.EXCEPTIONS) is captured
    assert Settings.from_env(capture_content=["exceptions"]).captures("exceptions")
