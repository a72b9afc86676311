"""Both sides of every threshold of the built-in maskers: digit counts, lengths, entropy."""

from __future__ import annotations

import dataclasses
import string

import pytest

from groundtrace.sdk.redaction import (
    BUILTIN_MASKERS,
    FunctionMasker,
    PatternMasker,
    Redactor,
    iban_valid,
    luhn_valid,
    shannon_entropy,
)

REDACTOR = Redactor()


def _luhn(body: str) -> str:
    """``body`` plus the check digit that makes it pass Luhn (any length)."""

    def valid(digits: str) -> bool:
        total = 0
        for i, char in enumerate(reversed(digits)):
            value = int(char) * (2 if i % 2 else 1)
            total += value - 9 if value > 9 else value
        return total % 10 == 0

    return next(body + d for d in string.digits if valid(body + d))


def _iban(length: int) -> str:
    """A synthetic IBAN of ``length`` characters whose mod-97 check holds."""
    bban = ("1234567890" * 4)[: length - 4]
    rearranged = bban + "GB00"
    check = 98 - int("".join(str(int(c, 36)) for c in rearranged)) % 97
    return f"GB{check:02d}{bban}"


@pytest.mark.parametrize(("digits", "masked"), [(12, False), (13, True), (19, True), (20, False)])
def test_a_card_number_has_13_to_19_digits(digits: int, masked: bool) -> None:
    number = _luhn("4" + "1" * (digits - 2))
    text = f"no {number} x"
    assert REDACTOR(text) == (
        ("no [REDACTED:credit_card] x", ("credit_card",)) if masked else (text, ())
    )


@pytest.mark.parametrize(("length", "valid"), [(14, False), (15, True), (34, True), (35, False)])
def test_an_iban_has_15_to_34_characters(length: int, valid: bool) -> None:
    assert iban_valid(_iban(length)) is valid


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("password=abc", "password=abc"),  # a password-like name: 4+ characters
        ("password=abcd", "password=[REDACTED:secret]"),
        ("api_key=a1B2c3D", "api_key=a1B2c3D"),  # 7 characters: too short
        ("api_key=a1B2c3D4", "api_key=[REDACTED:secret]"),  # 8 characters, entropy 3.0 exactly
        ("api_key=aabbccdd11", "api_key=aabbccdd11"),  # entropy below 3 bits per character
    ],
)
def test_a_credential_value_length_and_entropy(text: str, masked: str) -> None:
    assert REDACTOR(text)[0] == masked


def test_entropy_of_the_threshold_examples() -> None:
    assert shannon_entropy("a1B2c3D4") == 3.0
    assert shannon_entropy("aabbccdd11") < 3.0
    assert shannon_entropy("") == 0.0


@pytest.mark.parametrize(
    ("number", "masked"),
    [
        ("+1234567", False),  # an international number has 8-15 digits
        ("+12345678", True),
        ("+123456789012345", True),
        ("+1234567890123456", False),
        ("012 345 678", True),  # a national number has 9-12 digits
        ("0123 4567 8901", True),
        ("01234 5678 9012", False),
    ],
)
def test_a_phone_number_has_a_bounded_digit_count(number: str, masked: bool) -> None:
    text = f"call {number} now"
    assert REDACTOR(text)[0] == ("call [REDACTED:phone] now" if masked else text)


def test_a_masker_cannot_be_changed_once_built() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        BUILTIN_MASKERS["email"].name = "mail"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        FunctionMasker("upper", str.upper).name = "lower"  # type: ignore[misc]


def test_an_unknown_builtin_is_named_in_the_error() -> None:
    with pytest.raises(
        ValueError, match=r"^unknown built-in maskers \['mail'\]; known: \['private_key'"
    ):
        Redactor.builtins(["email", "mail"])


def test_a_masker_used_alone_masks_with_its_name() -> None:
    assert BUILTIN_MASKERS["email"].mask("mail bob@example.com now") == "mail [REDACTED:email] now"


def test_a_kept_prefix_that_is_the_whole_match_masks_nothing() -> None:
    masker = PatternMasker("ref", r"ref=\w*", keep=r"ref=\w*")
    redactor = Redactor([masker])
    assert redactor("see ref=abc") == ("see ref=abc", ())
    assert masker.mask("see ref=abc") == "see ref=abc"


def test_adjacent_finds_are_masked_apart_in_their_positions() -> None:
    later = PatternMasker("later", "bbb")
    earlier = PatternMasker("earlier", "aaa")
    redactor = Redactor([later, earlier])  # the second find has the higher priority
    assert redactor("xaaabbbx")[0] == "x[REDACTED:earlier][REDACTED:later]x"


def test_a_find_reaching_past_another_extends_the_mask() -> None:
    # one region, its markers in priority order ("b" first), not one marker per find
    redactor = Redactor([PatternMasker("b", "cdef"), PatternMasker("a", "abcd")])
    assert redactor("<abcdefg>") == ("<[REDACTED:b][REDACTED:a]g>", ("a", "b"))


def test_luhn_counts_the_digits_only() -> None:
    assert luhn_valid("CARD 4111 1111 1111 1111: OK")
    assert not luhn_valid("CARD 4111 1111 1111 1112: OK")


def test_edge_inputs_of_the_validators_and_triggers() -> None:
    assert not iban_valid("GB82 WEST 1234 5698 7654 3!")  # not alphanumeric
    basic = "Basic ZGVwbG95OlRyMHViNGRvciYz"
    assert REDACTOR("AUTHORIZATION: " + basic)[0] == "AUTHORIZATION: Basic [REDACTED:basic_auth]"
    # a text naming every secret word still has its credential masked
    masked, _ = REDACTOR("key secret token pwd, then password=hunter22")
    assert masked == "key secret token pwd, then password=[REDACTED:secret]"
    assert [m.name for m in Redactor.builtins(["email", "jwt"]).maskers] == ["jwt", "email"]


def test_luhn_takes_13_to_19_digits_and_names_must_be_unique() -> None:
    assert luhn_valid(_luhn("4" + "1" * 17))  # 19 digits
    assert not luhn_valid(_luhn("4" + "1" * 18))  # 20 digits, checksum valid
    with pytest.raises(ValueError, match=r"^duplicate masker names: \['email'\]$"):
        Redactor([BUILTIN_MASKERS["email"], BUILTIN_MASKERS["email"]])
