"""The token families of the common secret scanners: a positive example of each, as users paste
them, and the shapes a regression could stop masking.

The values are made up, built by concatenation (no scanner takes this file for a leak), but
have each family's exact shape.
"""

from __future__ import annotations

import base64

import pytest

from groundtrace.sdk.redaction import BUILTIN_MASKERS, Redactor

from .test_redaction import POSITIVE

REDACTOR = Redactor()
B64 = base64.b64encode(b"deploy:Tr0ub4dor&3").decode()
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "Zq9" * 8


def _pem(kind: str, block: str = "") -> str:
    return (
        f"-----BEGIN {kind}PRIVATE KEY{block}-----\n{PEM_BODY}\n"
        f"-----END {kind}PRIVATE KEY{block}-----"
    )


#: (masker, text, the secret that must not be exported)
EXAMPLES = [
    ("private_key", "key: " + _pem("OPENSSH "), PEM_BODY),
    ("private_key", "key: " + _pem("EC "), PEM_BODY),
    ("private_key", "key: " + _pem("DSA "), PEM_BODY),
    ("private_key", "key: " + _pem(""), PEM_BODY),
    ("private_key", "key: " + _pem("ENCRYPTED "), PEM_BODY),
    ("private_key", "key: " + _pem("PGP ", " BLOCK"), PEM_BODY),
    # a key cut off before its END line (a clipped error message) is masked to the end
    ("private_key", "bad key b'-----BEGIN RSA PRIVATE KEY-----\\n" + PEM_BODY, PEM_BODY),
    ("basic_auth", "Authorization: Basic " + B64, B64),
    ("basic_auth", "headers={'Authorization': 'Basic " + B64 + "'}", B64),
    ("basic_auth", 'curl -H "authorization: basic ' + B64 + '" https://x', B64),
    ("basic_auth", '{\\"Authorization\\": \\"Basic ' + B64 + '\\"}', B64),
    (
        "slack_token",
        "token xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCd",
    ),
    ("slack_token", "xoxp-" + "1234567890-" * 3 + "0123456789abcdef0123456789abcdef", "abcdef"),
    ("slack_token", "xoxa-2-" + "Zx81Kq" * 6, "Zx81Kq"),
    ("slack_token", "xoxr-" + "Zx81Kq" * 6, "Zx81Kq"),
    ("slack_token", "xoxs-" + "1234567890-" * 3 + "Zx81Kq", "Zx81Kq"),
    ("slack_token", "xoxe.xoxp-1-" + "Zx81Kq" * 6, "Zx81Kq"),
    ("slack_token", "xoxe-1-" + "Zx81Kq" * 6, "Zx81Kq"),
    ("slack_token", "xapp-1-A0123BCDE-" + "1234567890123-" + "ab12" * 8, "ab12"),
    (
        "slack_webhook",
        "POST https://hooks.slack.com/services/" + "T0AB12CD3/B0EF45GH6/" + "aB3dE6gH9jK2" * 2,
        "aB3dE6gH9jK2",
    ),
    ("slack_webhook", "hooks.slack.com/workflows/" + "T0AB12CD3/A0EF45GH6/" + "Qx7" * 8, "Qx7"),
    ("stripe_key", "stripe.api_key = sk_live_" + "51HbCd" * 5, "51HbCd"),
    ("stripe_key", "rk_live_" + "51HbCd" * 5, "51HbCd"),
    ("stripe_key", "sk_test_" + "51HbCd" * 5, "51HbCd"),
    ("stripe_key", "whsec_" + "Mz8pLq2V" * 4, "Mz8pLq2V"),
    ("google_api_key", "key=AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "SyA1b2C3"),
    ("aws_access_key", "ASIA" + "IOSFODNN7EXAMPL2", "IOSFODNN7EXAMPL2"),
    ("aws_access_key", "ABIA" + "IOSFODNN7EXAMPL2", "IOSFODNN7EXAMPL2"),
    ("aws_access_key", "ACCA" + "IOSFODNN7EXAMPL2", "IOSFODNN7EXAMPL2"),
    ("aws_access_key", "A3TX" + "IOSFODNN7EXAMPL2", "IOSFODNN7EXAMPL2"),
    ("github_token", "ghs_" + "Ab12Cd34" * 5, "Ab12Cd34"),
    ("github_token", "ghr_" + "Ab12Cd34" * 5, "Ab12Cd34"),
    ("github_token", "gho_" + "Ab12Cd34" * 5, "Ab12Cd34"),
    ("github_token", "ghu_" + "Ab12Cd34" * 5, "Ab12Cd34"),
    ("github_token", "GH_TOKEN github_pat_" + "11ABCDEFG0" + "_Ab12Cd34" * 8, "Ab12Cd34"),
    ("gitlab_token", "glpat-" + "Xy7_Zq9-Lm2" * 2, "Xy7_Zq9"),
    ("gitlab_token", "glptt-" + "0a1b2c3d4e" * 4, "0a1b2c3d4e"),
    ("gitlab_token", "gldt-" + "Xy7Zq9Lm2Wp4" * 2, "Xy7Zq9"),
    ("gitlab_token", "glrt-" + "Xy7Zq9Lm2Wp4" * 2, "Xy7Zq9"),
    ("huggingface", "HF token hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "AbCdEfGh"),
    ("package_token", "//registry.npmjs.org/:_authToken=npm_" + "a1B2c3" * 6, "a1B2c3"),
    ("package_token", "password = pypi-AgEIcHlwaS5vcmc" + "CJDk3Yz-Q_x" * 6, "CJDk3Yz"),
    ("sendgrid_key", "SG." + "Ab3De6Gh9Jk2Mn5Pq8St1v" + "." + "Xy7" * 14 + "Z", "Xy7Xy7"),
    ("openai_key", "ANTHROPIC_API_KEY sk-ant-api03-" + "Qw3Er5Ty7" * 10 + "AA", "Qw3Er5Ty7"),
    ("credit_card", "visa 4222222222222 on file", "4222222222222"),  # 13 digits
]


@pytest.mark.parametrize(("name", "text", "secret"), EXAMPLES)
def test_each_token_family_is_masked(name: str, text: str, secret: str) -> None:
    masked, fired = REDACTOR(text)
    assert secret not in masked
    assert f"[REDACTED:{name}]" in masked
    assert name in fired


def test_every_builtin_masker_has_a_positive_example() -> None:
    named = {name for name, _, _ in EXAMPLES} | {name for name, _, _ in POSITIVE}
    assert named == set(BUILTIN_MASKERS)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            "Authorization: Basic " + B64 + " sent",
            "Authorization: Basic [REDACTED:basic_auth] sent",
        ),
        (
            "https://hooks.slack.com/services/" + "T0AB12CD3/B0EF45GH6/" + "aB3dE6gH9jK2" * 2,
            "https://hooks.slack.com/services/[REDACTED:slack_webhook]",
        ),
        ("(sk_live_" + "51HbCd" * 5 + ")", "([REDACTED:stripe_key])"),
        ("a " + _pem("EC ") + " b", "a [REDACTED:private_key] b"),
    ],
)
def test_what_is_kept_around_a_token(text: str, masked: str) -> None:
    assert REDACTOR(text)[0] == masked


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Basic authentication failed",
        "Authorization: Basic " + base64.b64encode(b"no-colon-here").decode(),
        "Basic " + B64 + " without the header",
        "xoxo and hugs, xoxb- alone",
        "pk_live_" + "51HbCd" * 5,
        "the global English glass, glpat-short",
        "AIza too short",
        "hf_short npm_short SG.short",
        "-----BEGIN PUBLIC KEY-----\n" + PEM_BODY + "\n-----END PUBLIC KEY-----",
    ],
)
def test_near_misses_are_left_alone(text: str) -> None:
    assert REDACTOR(text) == (text, ())


def test_a_find_inside_another_never_ends_the_mask_early() -> None:
    masked, fired = REDACTOR("password=Xy9#bob@example.com-longsecretpart, next")
    assert masked == "password=[REDACTED:secret][REDACTED:email], next"
    assert fired == ("email", "secret")


def test_overlapping_finds_of_one_kind_are_one_marker() -> None:
    text = "t " + "xoxb-" + "1234567890-" * 2 + "Ab" * 8 + " u"
    masked, fired = REDACTOR(text)
    assert masked == "t [REDACTED:slack_token] u"
    assert fired == ("slack_token",)
