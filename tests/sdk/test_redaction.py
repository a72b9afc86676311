"""Built-in and custom maskers: what is masked, and what must be left alone."""

from __future__ import annotations

import base64
import json
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._attributes import SCAN_MARGIN, safe_json, text_value
from groundtrace.sdk._record import Recorder
from groundtrace.sdk._runtime import Settings
from groundtrace.sdk.redaction import (
    BUILTIN_MASKERS,
    FunctionMasker,
    Masker,
    PatternMasker,
    Redactor,
    iban_valid,
    luhn_valid,
    shannon_entropy,
)

from .conftest import Traces

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
#: Credential assignments of the common cloud and database credentials, and passwords in URLs.
CREDENTIALS = [
    (
        "secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "secret",
        "export AWS_SECRET_ACCESS_KEY=Je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "Je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    (
        "secret",
        "AWS_SESSION_TOKEN=FwoGZXIvYXdzEBYaDHk3pQ2mXr9Lv0Tn8Sa",
        "FwoGZXIvYXdzEBYaDHk3pQ2mXr9Lv0Tn8Sa",
    ),
    (
        "secret",
        "AZURE_CLIENT_SECRET: Qx8Q~vT3nB.k2LmR9pZs0YwE5dHfJ1uGcA7iXoN4",
        "Qx8Q~vT3nB.k2LmR9pZs0YwE5dHfJ1uGcA7iXoN4",
    ),
    (
        "secret",
        "DefaultEndpointsProtocol=https;AccountName=prod;"
        "AccountKey=Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTA=;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTA=",
    ),
    (
        "secret",
        'GOOGLE_API_KEY="AIzaSyD8kLm2Qw9Xv7Rt5Yp3Zn1Bc6Hj4Fg0Ue"',
        "AIzaSyD8kLm2Qw9Xv7Rt5Yp3Zn1Bc6Hj4Fg0Ue",
    ),
    ("secret", "POSTGRES_PASSWORD=Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("secret", "PGPASSWORD=xk3Lp9Wqz", "xk3Lp9Wqz"),
    ("secret", "Server=db;Database=app;User Id=sa;Pwd=Corr3ctH0rse;", "Corr3ctH0rse"),
    ("secret", "DB_PASS=m4ryL4mb!", "m4ryL4mb!"),
    ("secret", "passwd = Wh1sky7Tango", "Wh1sky7Tango"),
    (
        "secret",
        "SLACK_BOT_TOKEN='xoxb-2048-1357-Vq8Zr4Tn6Kp2Lm9Wx'",
        "xoxb-2048-1357-Vq8Zr4Tn6Kp2Lm9Wx",
    ),
    ("url_password", "redis://:Rd5pw0rdX@cache:6379/0", "Rd5pw0rdX"),
    ("url_password", "postgresql://app:Pg8s3cretZ@localhost:5432/prod", "Pg8s3cretZ"),
    ("url_password", "https://admin:Adm1nP4ss@10.0.0.12:8443/api", "Adm1nP4ss"),
    ("url_password", "amqp://svc:Mq7p@ss:w0rd@[fd00::12]:5672/vhost", "Mq7p@ss:w0rd"),
    ("url_password", "mongodb+srv://ops:Mg9Hx2Lq@cluster0/?authSource=admin", "Mg9Hx2Lq"),
]
POSITIVE += CREDENTIALS

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
    "Forgot your password? Use the password reset page.",
    "the key = the answer, a monkey: banana, turkey = dinner",
    "sort_key = lastModifiedDate, primary key: customer_id, partition_key: tenant",
    "max_tokens: 512 and tokens=2048; the secretary: Janet Smith",
    "http://localhost:8080/v1 and https://docs.example.com:443/path#top, ssh://git@host/repo",
    "at 10:42 the ratio was 3:2 @home",
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


# -- properties of every built-in masker: positives, adversarial near-misses, non-secrets ----
FAST = settings(max_examples=60, deadline=None)

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits


def _text(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=lo, max_size=hi)


def _luhn_complete(body: str) -> str:
    """``body`` plus the check digit that makes it pass Luhn."""
    return next(body + d for d in string.digits if luhn_valid(body + d))


def _group(digits: str, sep: str) -> str:
    return sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))


def _iban(bban: str, valid: bool) -> str:
    rearranged = bban + "GB00"
    check = 98 - int("".join(str(int(c, 36)) for c in rearranged)) % 97
    return f"GB{(check if valid else check % 97 + 1):02d}{bban}"


cards = st.builds(
    lambda body, sep: _group(_luhn_complete(body), sep),
    _text(string.digits, 15, 15),
    st.sampled_from(["", " ", "-"]),
)
ssn_area = st.integers(1, 899).filter(lambda a: a != 666)
ssns = st.builds(
    lambda a, g, s: f"{a:03d}-{g:02d}-{s:04d}", ssn_area, st.integers(1, 99), st.integers(1, 9999)
)


def _basic(user: str, password: str, form: str) -> str:
    return form.format(base64.b64encode(f"{user}:{password}".encode()).decode())


#: The kinds of PEM private key: ``-----BEGIN <kind>PRIVATE KEY<block>-----``.
KEY_KINDS = st.sampled_from(
    [
        *(("", ""), ("RSA ", ""), ("EC ", ""), ("DSA ", ""), ("OPENSSH ", "")),
        *(("ENCRYPTED ", ""), ("PGP ", " BLOCK")),
    ]
)
BASIC_FORMS = st.sampled_from(
    [
        "Authorization: Basic {}",
        "{{'Authorization': 'Basic {}'}}",
        '-H "authorization: basic {}"',
        "('Proxy-Authorization', 'Basic {}')",
        '{{\\"Authorization\\": \\"Basic {}\\"}}',
    ]
)
POSITIVES: dict[str, st.SearchStrategy[str]] = {
    "private_key": st.builds(
        lambda kind, body: (
            f"-----BEGIN {kind[0]}PRIVATE KEY{kind[1]}-----\n{body}\n"
            f"-----END {kind[0]}PRIVATE KEY{kind[1]}-----"
        ),
        KEY_KINDS,
        _text(ALNUM + "+/", 16, 64),
    ),
    "basic_auth": st.builds(_basic, _text(ALNUM, 1, 12), _text(ALNUM + "!:@", 1, 20), BASIC_FORMS),
    "gitlab_token": st.builds(
        lambda prefix, t: prefix + t,
        st.sampled_from(["glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glsoat-", "gloas-"]),
        _text(ALNUM + "_-", 20, 40),
    ),
    "slack_token": st.builds(
        lambda prefix, t: prefix + t,
        st.sampled_from(
            [
                *("xoxb-", "xoxp-", "xoxa-2-", "xoxr-", "xoxs-", "xoxo-", "xoxe-1-"),
                *("xoxe.xoxp-1-", "xapp-1-"),
            ]
        ),
        _text(ALNUM, 10, 40),
    ),
    "slack_webhook": st.builds(
        lambda kind, t: f"https://hooks.slack.com/{kind}/{t}",
        st.sampled_from(["services", "workflows", "triggers"]),
        _text(ALNUM + "/", 20, 50),
    ),
    "stripe_key": st.builds(
        lambda prefix, t: prefix + t,
        st.sampled_from(["sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "whsec_"]),
        _text(ALNUM, 24, 48),
    ),
    "google_api_key": st.builds(lambda t: "AIza" + t, _text(ALNUM + "_-", 35, 35)),
    "huggingface": st.builds(lambda t: "hf_" + t, _text(ALNUM, 34, 40)),
    "package_token": st.one_of(
        st.builds(lambda t: "npm_" + t, _text(ALNUM, 36, 36)),
        st.builds(lambda t: "pypi-AgEIcHlwaS5vcmc" + t, _text(ALNUM + "_-", 50, 80)),
    ),
    "sendgrid_key": st.builds(
        lambda a, b: f"SG.{a}.{b}", _text(ALNUM + "_-", 22, 22), _text(ALNUM + "_-", 43, 43)
    ),
    "jwt": st.builds(
        lambda a, b, c: f"eyJ{a}.eyJ{b}.{c}",
        _text(ALNUM + "_-", 5, 30),
        _text(ALNUM + "_-", 5, 30),
        _text(ALNUM, 10, 40),
    ),
    "bearer_token": st.builds(lambda t: f"Bearer {t}", _text(ALNUM, 16, 40)),
    "openai_key": st.builds(lambda t: f"sk-{t}", _text(ALNUM, 20, 48)),
    "aws_access_key": st.builds(
        lambda prefix, t: prefix + t,
        st.sampled_from(["AKIA", "ASIA", "ABIA", "ACCA", "A3TX"]),
        _text(UPPER_DIGITS, 16, 16),
    ),
    "github_token": st.one_of(
        st.builds(
            lambda prefix, t: prefix + t,
            st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
            _text(ALNUM, 36, 40),
        ),
        st.builds(lambda t: "github_pat_" + t, _text(ALNUM + "_", 22, 82)),
    ),
    "secret": st.builds(lambda t: f"password={t}", _text(ALNUM, 4, 20)),
    "email": st.builds(
        lambda user, host, tld: f"{user}@{host}.{tld}",
        _text(string.ascii_lowercase + string.digits, 1, 12),
        _text(string.ascii_lowercase, 1, 12),
        _text(string.ascii_lowercase, 2, 6),
    ),
    "iban": st.builds(lambda b: _iban("WEST" + b, True), _text(string.digits, 14, 14)),
    "credit_card": cards,
    "us_ssn": ssns,
    "uk_nino": st.builds(
        lambda digits, suffix: f"AB{digits}{suffix}",
        _text(string.digits, 6, 6),
        st.sampled_from("ABCD"),
    ),
    "url_password": st.builds(
        lambda scheme, user, password, host: f"{scheme}://{user}:{password}@{host}/db",
        st.sampled_from(["redis", "postgresql", "https", "amqp", "mongodb+srv", "s3"]),
        _text(string.ascii_lowercase, 0, 8),
        _text(ALNUM + "@:!~%", 1, 20),
        st.sampled_from(["cache", "localhost:5432", "10.0.0.12:8443", "[::1]:6379", "db.corp"]),
    ),
    "phone": st.builds(
        lambda cc, a, b, c: f"+{cc} {a:03d} {b:03d} {c:04d}",
        st.integers(1, 99),
        st.integers(200, 999),
        st.integers(200, 999),
        st.integers(0, 9999),
    ),
}

NEAR_MISSES: dict[str, st.SearchStrategy[str]] = {
    "private_key": st.builds(  # a public key or a certificate is no secret
        lambda kind, b: f"-----BEGIN {kind}-----\n{b}\n-----END {kind}-----",
        st.sampled_from(["PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", "PGP PUBLIC KEY BLOCK"]),
        _text(ALNUM, 16, 64),
    ),
    "basic_auth": st.one_of(
        # credentials that are not base64 of user:password, and Basic without the header
        st.builds(
            lambda w: f"Authorization: Basic {w}",
            _text(string.ascii_lowercase, 5, 15).filter(lambda w: len(w) % 4),  # not base64
        ),
        st.builds(
            lambda user: "Authorization: Basic " + base64.b64encode(user.encode()).decode(),
            _text(ALNUM, 1, 20),
        ),
        st.builds(_basic, _text(ALNUM, 1, 12), _text(ALNUM, 1, 12), st.just("Basic {}")),
    ),
    "gitlab_token": st.builds(lambda t: "glpat-" + t, _text(ALNUM, 1, 19)),
    "slack_token": st.builds(
        lambda prefix, t: prefix + t,
        st.sampled_from(["xoxb-", "xoxz-", "xox-", "xapp-"]),
        _text(ALNUM, 1, 9),
    ),
    "slack_webhook": st.builds(
        lambda t: f"https://hooks.slack.com/services/{t}", _text(ALNUM, 1, 19)
    ),
    "stripe_key": st.one_of(  # a publishable key is public
        st.builds(lambda t: "pk_live_" + t, _text(ALNUM, 10, 40)),
        st.builds(lambda t: "sk_live_" + t, _text(ALNUM, 1, 9)),
        st.builds(lambda t: "whsec_" + t, _text(ALNUM, 1, 23)),
    ),
    "google_api_key": st.builds(lambda t: "AIza" + t, _text(ALNUM, 1, 34)),
    "huggingface": st.builds(lambda t: "hf_" + t, _text(ALNUM, 1, 33)),
    "package_token": st.one_of(
        st.builds(lambda t: "npm_" + t, _text(ALNUM, 1, 35)),
        st.builds(lambda t: "pypi-AgEIcHlwaS5vcmc" + t, _text(ALNUM, 1, 49)),
    ),
    "sendgrid_key": st.builds(
        lambda a, b: f"SG.{a}.{b}", _text(ALNUM, 22, 22), _text(ALNUM, 1, 42)
    ),
    "jwt": st.builds(lambda a, b: f"eyJ{a}.xyz{b}.sig", _text(ALNUM, 5, 30), _text(ALNUM, 5, 30)),
    "bearer_token": st.builds(lambda t: f"Bearer {t}", _text(string.ascii_lowercase, 1, 15)),
    "openai_key": st.builds(lambda t: f"sk-{t}", _text(ALNUM, 1, 19)),
    "aws_access_key": st.builds(lambda t: f"AKIA{t}", _text(UPPER_DIGITS, 1, 15)),
    "github_token": st.builds(lambda t: f"ghp_{t}", _text(ALNUM, 1, 35)),
    "secret": st.builds(lambda n: f"api_key={'a' * n}", st.integers(8, 40)),  # no entropy
    "email": st.builds(
        lambda u, h: f"{u}@{h}",
        _text(string.ascii_lowercase, 1, 9),
        _text(string.ascii_lowercase, 1, 9),
    ),
    "iban": st.builds(lambda b: _iban("WEST" + b, False), _text(string.digits, 14, 14)),
    "credit_card": st.builds(
        lambda body, sep: _group(
            next(body + d for d in string.digits if not luhn_valid(body + d)), sep
        ),
        _text(string.digits, 15, 15),
        st.sampled_from([" ", "-"]),
    ),
    "us_ssn": st.builds(
        lambda a, s: f"{a:03d}-12-{s:04d}",
        st.sampled_from([0, 666, 900, 999]),
        st.integers(1, 9999),
    ),
    "uk_nino": st.builds(lambda d: f"GB{d}A", _text(string.digits, 6, 6)),
    "phone": st.builds(lambda n: f"{n:010d}", st.integers(10**9, 10**10 - 1)),  # a plain digit run
    "url_password": st.builds(  # a user name without a password, a port, an @ in the path
        lambda user, host, port: f"https://{user}@{host}:{port}/a@b http://{host}:{port}/x@y",
        _text(string.ascii_lowercase, 1, 8),
        st.sampled_from(["cache", "localhost", "10.0.0.12", "[::1]", "db.corp"]),
        st.integers(1, 65535),
    ),
}


def test_every_builtin_has_properties() -> None:
    assert set(POSITIVES) == set(BUILTIN_MASKERS) == set(NEAR_MISSES)


@pytest.mark.parametrize("name", sorted(POSITIVES))
@FAST
@given(data=st.data())
def test_positive_is_masked_in_any_context(name: str, data: st.DataObject) -> None:
    secret = data.draw(POSITIVES[name])
    before = data.draw(st.sampled_from(["", "see ", "x: ", "(", "qty 3 "]))
    after = data.draw(st.sampled_from(["", " ok", ".", ")", " exp 12/29"]))
    masked, fired = REDACTOR(before + secret + after)
    assert name in fired
    kept = BUILTIN_MASKERS[name].keep
    assert secret not in masked if kept is None else f"[REDACTED:{name}]" in masked


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
@FAST
@given(data=st.data())
def test_near_miss_is_left_alone(name: str, data: st.DataObject) -> None:
    text = "value " + data.draw(NEAR_MISSES[name]) + " here"
    assert name not in REDACTOR(text)[1]


CREDENTIAL_NAMES = [
    *("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "aws_session_token", "AWS_SESSION_TOKEN"),
    *("AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY", "AccountKey", "SharedAccessKey"),
    *("Ocp-Apim-Subscription-Key", "GOOGLE_API_KEY", "client_secret", "DJANGO_SECRET_KEY"),
    *("HF_TOKEN", "api_key", "apiKey", "x-api-key", "DB_PASSWORD", "PGPASSWORD", "MYSQL_PWD"),
    *("spring.datasource.password", "REDIS_PASS", "passwd", "Password", "pwd"),
]


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
@settings(max_examples=15, deadline=None)
@given(
    value=_text(ALNUM + "/+=_.~-", 24, 48).filter(lambda v: shannon_entropy(v) >= 3.0),
    form=st.sampled_from(["{n}={v}", "{n} = {v}", "{n}: {v}", '"{n}": "{v}"', "export {n}='{v}'"]),
)
def test_a_credential_assignment_is_masked(name: str, value: str, form: str) -> None:
    masked, fired = REDACTOR("config: " + form.format(n=name, v=value) + " end")
    assert value not in masked
    assert "secret" in fired
    assert name in masked  # the name is kept


@FAST
@given(
    user=_text(string.ascii_lowercase, 0, 8),
    password=_text(ALNUM + "@:!~%", 1, 20),
    host=st.sampled_from(["cache", "10.0.0.12", "[fd00::12]", "db.corp.example.com"]),
    port=st.sampled_from(["", ":5432", ":8443"]),
)
def test_the_password_of_any_url_is_masked(user: str, password: str, host: str, port: str) -> None:
    url = f"postgresql://{user}:{password}@{host}{port}/prod"
    masked, fired = REDACTOR(f"connect to {url} now")
    assert "url_password" in fired
    assert masked.startswith(f"connect to postgresql://{user}:[REDACTED:")
    assert f"{password}@" not in masked


@FAST
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=50))
def test_float_lists_are_never_rewritten(values: list[float]) -> None:
    text = json.dumps(values)
    assert REDACTOR(text) == (text, ())
    as_strings = json.dumps([repr(v) for v in values])
    assert REDACTOR(as_strings) == (as_strings, ())


def test_luhn_valid_float_digits_are_not_a_card() -> None:
    assert luhn_valid("4111111111111111")
    for text in ("0.4111111111111111", "[0.4111111111111111,0.5]", "4111111111111111.25"):
        assert REDACTOR(text) == (text, ())


@FAST
@given(cards, st.integers(1, 99), st.integers(1, 12), st.integers(20, 40))
def test_card_next_to_other_digit_groups_is_masked(
    card: str, quantity: int, month: int, year: int
) -> None:
    masked, fired = REDACTOR(f"order {quantity} {card} {month:02d}/{year}")
    assert card not in masked
    assert "credit_card" in fired


@FAST
@given(cards, ssns)
def test_overlapping_kinds_are_all_masked(card: str, ssn: str) -> None:
    masked, fired = REDACTOR(f"card {card} {ssn} end")
    assert card not in masked
    assert ssn not in masked
    assert {"credit_card", "us_ssn"} <= set(fired)


def test_recorded_numbers_are_never_masked() -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    ints = [4111111111111111, 378282246310005]
    assert rec.json("k", ints) == json.dumps(ints, separators=(",", ":"))
    assert rec.json("k", [[0.4111111111111111, 1], (2, 3.5)]) == "[[0.4111111111111111,1],[2,3.5]]"
    assert rec.json("k", {"card": "4111 1111 1111 1111"}) == '{"card":"[REDACTED:credit_card]"}'
    assert rec.fired == {"credit_card"}


card_numbers = st.builds(lambda body: int(_luhn_complete(body)), _text(string.digits, 12, 18))
json_numbers = st.one_of(
    card_numbers,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
numeric_structures = st.recursive(
    json_numbers,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.sampled_from(["order", "card", "pin", "password", "id"]), inner),
    ),
    max_leaves=30,
)


@FAST
@given(numeric_structures)
def test_numbers_inside_structures_are_never_rewritten(value: object) -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    assert rec.json("k", value) == safe_json(value)
    assert not rec.fired


@FAST
@given(card_numbers, cards)
def test_a_card_number_int_is_kept_and_a_card_string_beside_it_masked(
    number: int, card: str
) -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    recorded = json.loads(rec.json("k", {"order": number, "paid": [card, number]}))
    assert recorded["order"] == recorded["paid"][1] == number
    assert "[REDACTED:credit_card]" in recorded["paid"][0]
    assert card not in recorded["paid"][0]
    assert rec.fired is not None
    assert "credit_card" in rec.fired


def test_a_structure_after_a_secret_name_is_not_taken_for_its_value() -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    for value in ({"password": [[]], "order": None}, {"token": {"a": [{}]}, "x": "y"}):
        assert rec.json("k", value) == safe_json(value)
    assert not rec.fired


def test_strings_of_a_json_value_are_masked_with_their_keys() -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    value = {"password": "hunter22", "n": 4111111111111111, "who": ["bob@example.com", 5]}
    recorded = json.loads(rec.json("k", value))  # still valid JSON
    assert recorded == {
        "password": "[REDACTED:secret]",
        "n": 4111111111111111,
        "who": ["[REDACTED:email]", 5],
    }


# -- the cost of masking is bounded by the attribute limit -------------------------------------


class ScanSpy:
    """The default redactor, noting the length of every text it is asked to scan."""

    def __init__(self) -> None:
        self.scanned: list[str] = []

    def __call__(self, text: str) -> tuple[str, tuple[str, ...]]:
        self.scanned.append(text)
        return REDACTOR(text)


def test_huge_values_are_clipped_before_they_are_scanned(traces: Traces) -> None:
    spy = ScanSpy()
    limit = 1000
    traces.settings(redact=spy, max_attribute_length=limit)

    @gt.tool
    def upload(blob: str) -> int:
        return len(blob)

    @gt.infer
    def embed(n: int) -> list[float]:
        return [i / 7 for i in range(n)]

    @gt.infer
    def score(n: int) -> dict[str, list[float]]:
        return {"scores": [i / 7 for i in range(n)]}

    upload("x" * 50_000_000)
    embed(100_000)
    score(100_000)
    assert spy.scanned
    assert max(map(len, spy.scanned)) <= limit + SCAN_MARGIN
    # of the JSON values only their strings are scanned, never their numbers
    assert all(text.startswith('"') or text == "x" * len(text) for text in spy.scanned)
    assert '"scores"' in spy.scanned
    tool = traces.one("TOOL").attributes or {}
    assert len(str(tool[sc.GT_TOOL_ARGUMENTS])) == limit
    assert sc.GT_TOOL_ARGUMENTS in tuple(tool[sc.GT_TRUNCATED])
    embedded = traces.by_name("embed").attributes or {}
    assert len(str(embedded[sc.OI_OUTPUT_VALUE])) == limit


def test_a_secret_across_the_limit_is_masked_before_it_is_cut(traces: Traces) -> None:
    traces.settings(redact=REDACTOR, max_attribute_length=100)

    @gt.tool
    def send(note: str) -> None:
        return None

    send("x" * 90 + " bob.smith@example.com " + "y" * 50_000)
    arguments = str((traces.one("TOOL").attributes or {})[sc.GT_TOOL_ARGUMENTS])
    assert len(arguments) == 100
    assert "bob" not in arguments


@pytest.mark.parametrize("levels", [0, 1, 2, 3])
def test_a_secret_in_json_inside_json_strings_is_masked(levels: int) -> None:
    text = json.dumps({"client_secret": "Zq8xV2mK9pL4nR7t", "password": "hunter22"})
    for _ in range(levels):  # a JSON document captured inside a string, and so on
        text = json.dumps({"note": text})
    masked, fired = REDACTOR(text)
    assert "Zq8xV2mK9pL4nR7t" not in masked and "hunter22" not in masked
    assert fired == ("secret",)
    for _ in range(levels):  # still valid JSON at every level
        masked = json.loads(masked)["note"]
    assert json.loads(masked) == {
        "client_secret": "[REDACTED:secret]",
        "password": "[REDACTED:secret]",
    }


@FAST
@given(
    piece=st.text(alphabet='ab "\\\n\u00e9\u4e2d\U0001f600', min_size=1, max_size=40),
    redact=st.booleans(),
    as_argument=st.booleans(),
)
def test_a_long_string_is_recorded_as_if_serialised_whole(
    piece: str, redact: bool, as_argument: bool
) -> None:
    text = piece * (SCAN_MARGIN // len(piece) + 20)  # longer than limit + SCAN_MARGIN
    settings = Settings(redact=REDACTOR if redact else None, max_attribute_length=10)
    value: object = {"blob": text, "n": 1} if as_argument else text
    rec = Recorder(settings)
    whole: list[str] = []
    expected = text_value(
        safe_json(value), settings, key="k", truncated=whole, fired=set(), json_text=True
    )
    assert rec.json("k", value) == expected
    assert rec.truncated == whole == ["k"]
