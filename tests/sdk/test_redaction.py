"""Built-in and custom maskers: what is masked, and what must be left alone."""

from __future__ import annotations

import re

import pytest

from groundtrace.sdk.redaction import (
    BUILTIN_MASKERS,
    FunctionMasker,
    Masker,
    PatternMasker,
    Redactor,
    iban_valid,
    luhn_valid,
)

REDACTOR = Redactor()

POSITIVE = [
    ("email", "write to bob.smith+rag@example.co.uk today", "bob.smith+rag@example.co.uk"),
    ("credit_card", "card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111"),
    ("credit_card", "amex 378282246310005.", "378282246310005"),
    ("credit_card", "dashed 5555-5555-5555-4444", "5555-5555-5555-4444"),
    ("us_ssn", "ssn 123-45-6789 on file", "123-45-6789"),
    ("uk_nino", "NI number AB 12 34 56 C", "AB 12 34 56 C"),
    ("uk_nino", "NI AB123456C", "AB123456C"),
    ("iban", "pay GB82 WEST 1234 5698 7654 32 now", "GB82 WEST 1234 5698 7654 32"),
    ("iban", "DE89370400440532013000", "DE89370400440532013000"),
    ("phone", "call +1 415 555 2671", "+1 415 555 2671"),
    ("phone", "call +44 20 7946 0958", "+44 20 7946 0958"),
    ("phone", "call (415) 555-2671", "(415) 555-2671"),
    ("phone", "call 415-555-2671 now", "415-555-2671"),
    ("phone", "call 415.555.2671", "415.555.2671"),
    ("phone", "london 020 7946 0958", "020 7946 0958"),
    ("phone", "mobile 07700 900123", "07700 900123"),
    ("phone", "paris 01 23 45 67 89", "01 23 45 67 89"),
    ("openai_key", "OPENAI_API_KEY sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-abc"),
    ("aws_access_key", "aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("github_token", "gh ghp_" + "A1b2" * 9, "ghp_" + "A1b2" * 9),
    (
        "jwt",
        "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ),
    ("bearer_token", "Authorization: Bearer abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789"),
    ("secret", "api_key=a8Fk29dLq0ZpX7Qw", "a8Fk29dLq0ZpX7Qw"),
    ("secret", '{"client_secret": "Zq8xV2mK9pL4nR7t"}', "Zq8xV2mK9pL4nR7t"),
    ("secret", "password: hunter22", "hunter22"),
    (
        "private_key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
    ),
]

NEGATIVE = [
    "Jaws was released in 1975 and grossed 470,653,000 dollars.",
    "order id 123456789 shipped on 2024-01-15 at 10:42:07",
    "the war lasted 1939-1945; see pages 112-118",
    "card 4111 1111 1111 1112 fails the Luhn check",
    "ticket 1234567890123456 is a Luhn-invalid 16 digit id",
    "ip 192.168.100.200, version 1.2.3, ratio 3.14159265",
    "unix time 1700000000123 ms",
    "api_key=changeme and token=abc are placeholders, not secrets",
    "skeleton sk-short is not a key; AKIA alone is not one either",
    "a@b is not an address; neither is user at example dot com",
    "SSN-like 000-12-3456 and 666-12-3456 are invalid area numbers",
    "IBAN-like GB00 WEST 1234 5698 7654 32 fails mod-97",
    "the Bearer of bad news",
]


@pytest.mark.parametrize(("name", "text", "secret"), POSITIVE)
def test_builtin_masks(name: str, text: str, secret: str) -> None:
    masked, fired = REDACTOR(text)
    assert secret not in masked
    assert f"[REDACTED:{name}]" in masked
    assert name in fired


@pytest.mark.parametrize("text", NEGATIVE)
def test_builtin_leaves_alone(text: str) -> None:
    assert REDACTOR(text) == (text, ())


def test_context_around_a_match_is_kept() -> None:
    masked, _ = REDACTOR("Authorization: Bearer abcDEF123456ghiJKL789; ok")
    assert masked == "Authorization: Bearer [REDACTED:bearer_token]; ok"
    masked, _ = REDACTOR("password=hunter22&user=bob")
    assert masked == "password=[REDACTED:secret]&user=bob"


def test_several_maskers_fire_in_one_text() -> None:
    masked, fired = REDACTOR("bob@example.com paid with 4111-1111-1111-1111, call +1 415 555 2671")
    assert masked == "[REDACTED:email] paid with [REDACTED:credit_card], call [REDACTED:phone]"
    assert fired == ("credit_card", "email", "phone")


def test_validators() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("411111111111")  # 12 digits: too short for a card
    assert iban_valid("GB82WEST12345698765432")
    assert not iban_valid("GB83WEST12345698765432")


def test_custom_regex_masker_is_fused_and_tried_first() -> None:
    ticket = PatternMasker("ticket", re.compile(r"\btck-(?P<num>\d{6})\b", re.IGNORECASE))
    redactor = Redactor.default().with_maskers(ticket)
    assert redactor("TCK-123456 and bob@example.com") == (
        "[REDACTED:ticket] and [REDACTED:email]",
        ("email", "ticket"),
    )
    assert redactor.names[0] == "ticket"


def test_custom_masker_with_validator_and_keep() -> None:
    employee = PatternMasker(
        "employee",
        r"emp#\d+",
        validate=lambda s: s.endswith("7"),
        keep=r"emp#",
    )
    redactor = Redactor([employee])
    assert redactor("emp#1237 emp#1238") == ("emp#[REDACTED:employee] emp#1238", ("employee",))


def test_callable_masker() -> None:
    upper = FunctionMasker("shout", lambda s: s.replace("secret", "******"))
    assert isinstance(upper, Masker)
    redactor = Redactor([upper])
    assert redactor("a secret") == ("a ******", ("shout",))
    assert redactor("nothing") == ("nothing", ())


def test_builtins_subset_and_errors() -> None:
    only_email = Redactor.builtins(["email"])
    assert only_email("bob@example.com 123-45-6789") == ("[REDACTED:email] 123-45-6789", ("email",))
    with pytest.raises(ValueError, match="unknown built-in"):
        Redactor.builtins(["emails"])
    with pytest.raises(ValueError, match="duplicate"):
        Redactor([BUILTIN_MASKERS["email"], BUILTIN_MASKERS["email"]])


def test_every_builtin_is_documented_in_the_module_docstring() -> None:
    import groundtrace.sdk.redaction as module

    assert module.__doc__ is not None
    for name in BUILTIN_MASKERS:
        assert f"``{name}``" in module.__doc__


def test_masking_is_idempotent_on_masked_text() -> None:
    once, _ = REDACTOR("bob@example.com 4111 1111 1111 1111 sk-" + "a" * 30)
    assert REDACTOR(once) == (once, ())
