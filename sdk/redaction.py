"""Redaction of personal data and secrets in captured text, before anything leaves the process.

A :class:`Redactor` is what ``configure(redact=...)`` installs; it is applied to every captured
text field (query, evidence content, answer, messages, tool arguments and results). Each match
is replaced by ``[REDACTED:<masker name>]`` and the names of the maskers that fired are written
on the span (``groundtrace.redacted``).

Built-in maskers (all on by default; see :data:`BUILTIN_MASKERS`):

==================  ==========================================================================
name                what is masked
==================  ==========================================================================
``private_key``     PEM private key blocks of any kind (RSA, EC, DSA, OpenSSH, PKCS#8,
                    encrypted, PGP ``PRIVATE KEY BLOCK``), ``-----BEGIN`` to ``END``; a block
                    whose end is missing (a clipped message) is masked to the end of the text
``jwt``             JSON Web Tokens (``eyJ...``.``eyJ...``.signature)
``bearer_token``    the token after ``Bearer`` (the word ``Bearer`` is kept)
``basic_auth``      HTTP Basic credentials, ``Authorization: Basic <base64 of user:password>``
                    (also quoted, as in a dict of headers; the words before it are kept)
``openai_key``      OpenAI-style keys ``sk-...`` / ``sk-proj-...`` / Anthropic ``sk-ant-...``
                    (20+ characters after sk-)
``aws_access_key``  AWS access key ids ``AKIA`` / ``ASIA`` / ``ABIA`` / ``ACCA`` / ``A3T.`` +
                    16 characters
``github_token``    GitHub tokens ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_`` ``github_pat_``
``gitlab_token``    GitLab tokens ``glpat-`` ``glptt-`` ``gldt-`` ``glrt-`` ``glcbt-``
                    ``glft-`` ``glimt-`` ``glsoat-`` ``gloas-`` + 20 or more characters
``slack_token``     Slack tokens ``xoxb-`` ``xoxp-`` ``xoxa-`` ``xoxr-`` ``xoxs-`` ``xoxo-``
                    ``xoxe-`` / ``xoxe.xoxp-`` and app tokens ``xapp-``
``slack_webhook``   the secret path of a Slack webhook, ``hooks.slack.com/services/...``
                    (also ``/workflows/``, ``/triggers/``; the host and kind are kept)
``stripe_key``      Stripe secret and restricted keys ``sk_live_`` ``rk_live_`` (and
                    ``_test_`` / ``_prod_``), webhook secrets ``whsec_``
``google_api_key``  Google API keys ``AIza`` + 35 characters
``huggingface``     Hugging Face tokens ``hf_`` + 34 or more letters and digits
``package_token``   package registry tokens: npm ``npm_`` + 36, PyPI ``pypi-AgEIcHlwaS5vcmc...``
``sendgrid_key``    SendGrid API keys ``SG.<22>.<43>``
``secret``          the value of a credential assignment, ``name = value`` / ``NAME=value`` /
                    ``name: value``, where the name ends in ``password``, ``passwd``, ``pwd``,
                    ``passphrase``, ``_pass``, ``secret``, ``token`` or ``api`` / ``access`` /
                    ``account`` / ``secret`` / ``private`` / ``storage`` / ``subscription`` /
                    ``master`` / ``signing`` / ``encryption`` ``key`` (any prefix:
                    ``AWS_SECRET_ACCESS_KEY``, ``aws_session_token``, ``AZURE_CLIENT_SECRET``,
                    ``AccountKey``, ``GOOGLE_API_KEY``, ``PGPASSWORD``, ``DB_PASS``; any case):
                    always for password-like names (4+ chars), otherwise only when the value
                    looks random (Shannon entropy >= 3 bits/char, 8+ chars); the quotes around
                    name and value may be escaped (JSON in a string)
``url_password``    the password of a URL's userinfo, ``scheme://user:password@host``: any
                    scheme, any host (no dot, IPv4, ``[IPv6]``), any port (user and host kept)
``email``           e-mail addresses
``iban``            IBANs (validated with the ISO 13616 mod-97 check)
``credit_card``     13-19 digit card numbers, optionally grouped by spaces/dashes, *only* when
                    the Luhn checksum is valid; found among neighbouring digit groups (a
                    quantity before, an expiry date after); digits of a decimal number
                    (``0.4111111111111111``) are never taken for a card
``us_ssn``          US social security numbers in the ``123-45-6789`` form (invalid area
                    numbers 000, 666, 9xx excluded)
``uk_nino``         UK National Insurance numbers (``QQ 12 34 56 C``, spaced or not)
``phone``           international numbers (``+`` and 8-15 digits) and common national forms
                    with separators: ``(415) 555-2671``, ``415-555-2671``, ``415.555.2671``,
                    UK ``020 7946 0958`` / ``07700 900123``, French ``01 23 45 67 89``.
                    Plain digit runs (years, order ids) are never treated as phone numbers.
==================  ==========================================================================

Of a value captured as JSON (arguments, return values, requests, tool results) only the string
literals are scanned: numbers are never given to the maskers, so an ``int`` such as
``4111111111111111`` or a score list is recorded exactly, whatever its digits.
Every masker looks at the whole text on its own, so overlapping finds of different kinds are all
masked: the union of their spans is replaced by one marker per kind, in priority order.
Custom maskers: a :class:`PatternMasker` (a regex, optionally with a validator and a prefix to
keep) is scanned like the built-ins; any other object satisfying the :class:`Masker` protocol
(``name`` and ``mask(text) -> text``) runs after them.

Cost: each built-in masker names its *anchors*, characters every find of it holds (``@`` for
an e-mail address, ``-`` / ``_`` for the token prefixes, ``:`` / ``=`` for an assignment, two
digits for any number). A redactor looks for all of them in one pass over the text, in C;
text holding none (most prose, a title with one digit) is returned as it is, and otherwise
only the maskers whose anchors it holds evaluate their trigger and scan it (which maskers that
is, is remembered by the anchors held); text for which none of those triggers fires (a title
with the ``3`` of the AWS prefix ``A3T``) is returned as it is too. The texts of a span's
evidence list (titles, sources, contents) are looked at together, in one pass
(:meth:`Redactor.may_change_each`), and only those that may change go through the maskers.
A custom :class:`PatternMasker` without anchors is considered for every text.

Usage::

    from groundtrace.sdk.redaction import PatternMasker, Redactor

    redactor = Redactor.default().with_maskers(PatternMasker("ticket", r"\\bTCK-\\d{6}\\b"))
    redactor("mail bob@example.com about TCK-123456")
    # -> ('mail [REDACTED:email] about [REDACTED:ticket]', ('email', 'ticket'))
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

__all__ = [
    "BUILTIN_MASKERS",
    "FunctionMasker",
    "Masker",
    "PatternMasker",
    "Redactor",
    "iban_valid",
    "luhn_valid",
    "shannon_entropy",
]

_REPLACEMENT: Final = "[REDACTED:{name}]"
#: What joins the texts scanned at once by :meth:`Redactor.may_change_each` (never an anchor).
_SEPARATOR: Final = "\0"
_SEPARATOR_BYTE: Final = _SEPARATOR.encode()
#: A redactor remembers which maskers to consider for a text by the anchors it holds (in
#: order, repeats kept) when there are at most this many (most texts: a few), and at most
#: :data:`_PLANS` such plans.
_PLAN_KEY: Final = 16
_PLANS: Final = 4096


@runtime_checkable
class Masker(Protocol):
    """Anything that masks one kind of sensitive text."""

    @property
    def name(self) -> str:
        """Short name, used in ``[REDACTED:<name>]`` and in ``groundtrace.redacted``."""
        ...

    def mask(self, text: str) -> str:
        """Return ``text`` with every occurrence masked."""
        ...


@dataclass(frozen=True, slots=True)
class PatternMasker:
    """A regex masker; the built-ins are all of this kind.

    Attributes:
        name: the masker name.
        pattern: the regex (a string or compiled pattern; its flags are kept).
        validate: optional check on the matched text; matches it rejects are left alone.
        keep: optional regex; the part of the match it matches at the start is kept
            (e.g. ``Bearer `` before a token, ``password=`` before a value).
        trigger: optional cheap pre-check on the whole text; when it returns False the
            masker is left out of the scan (a speed-up only: it must never return False
            on text the pattern could match). One trigger object shared by several
            maskers is evaluated once per text.
        candidates: optional ``match -> (start, end)`` spans inside one match to try
            instead of the whole match (``validate`` then checks each of them); e.g. the
            runs of whole digit groups inside a longer run of groups.
        anchors: optional characters of which every text this masker masks holds at least
            one (``"@"`` for e-mail addresses, the ASCII digits for card numbers). A
            redactor looks for the anchors of all its maskers at once, in one pass over the
            text, and evaluates only the triggers of the maskers whose anchors it holds, so
            text holding none (most prose) costs that one pass. A speed-up only, like
            ``trigger``: it must hold for every text the masker could mask; empty (the
            default): the masker is always considered.
        min_anchors: how many characters from ``anchors`` (repeats counted) every text this
            masker masks holds at least: 2 or more lets the redactor's first pass leave out
            text holding just one (a title with one digit skips the number maskers).
    """

    name: str
    pattern: str | re.Pattern[str]
    validate: Callable[[str], bool] | None = None
    keep: str | re.Pattern[str] | None = None
    trigger: Callable[[str], bool] | None = None
    candidates: Callable[[str], Iterable[tuple[int, int]]] | None = None
    anchors: str = ""
    min_anchors: int = 1

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return self.pattern if isinstance(self.pattern, re.Pattern) else re.compile(self.pattern)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """The ``(start, end)`` spans of ``text`` this masker masks (kept prefixes excluded)."""
        validate, keep, candidates = self.validate, self.keep, self.candidates
        for match in self.compiled().finditer(text):
            start = match.start()
            found = (
                ((0, match.end() - start),) if candidates is None else candidates(match.group(0))
            )
            for lo, hi in found:
                matched = text[start + lo : start + hi]
                if validate is not None and not validate(matched):
                    continue
                kept = None if keep is None else re.match(keep, matched)
                skip = 0 if kept is None else kept.end()
                if lo + skip < hi:
                    yield start + lo + skip, start + hi

    def mask(self, text: str) -> str:
        """Mask ``text`` with this masker alone."""
        return _replace(text, [(lo, hi, 0) for lo, hi in self.spans(text)], (self.name,))


@dataclass(frozen=True, slots=True)
class FunctionMasker:
    """Wrap a ``str -> str`` function as a masker (it fired when the text changed)."""

    name: str
    function: Callable[[str], str]

    def mask(self, text: str) -> str:
        """Apply the function."""
        return self.function(text)


def _replace(text: str, spans: list[tuple[int, int, int]], names: tuple[str, ...]) -> str:
    """Replace the union of ``(start, end, masker index)`` spans, one marker per kind."""
    spans.sort()
    out: list[str] = []
    done = 0
    i = 0
    while i < len(spans):
        lo, hi, index = spans[i]
        kinds = {index}
        i += 1
        while i < len(spans) and spans[i][0] < hi:
            hi = max(hi, spans[i][1])
            kinds.add(spans[i][2])
            i += 1
        out.append(text[done:lo])
        out.extend(_REPLACEMENT.format(name=names[k]) for k in sorted(kinds))
        done = hi
    out.append(text[done:])
    return "".join(out)


# -- validators -------------------------------------------------------------------------------


def luhn_valid(text: str) -> bool:
    """Whether the digits of ``text`` (13-19 of them) pass the Luhn checksum."""
    digits = [ord(c) - 48 for c in text if "0" <= c <= "9"]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        value = digit * 2 if i % 2 == 1 else digit
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """ISO 13616 check: length 15-34 and mod-97 of the rearranged number equals 1."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(c, 36)) for c in rearranged))
    except ValueError:
        return False
    return number % 97 == 1


def shannon_entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _phone_valid(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    return 8 <= digits <= 15 if text.startswith("+") else 9 <= digits <= 12


#: The end of a credential's name: ``password``, ``api_key``, ``client_secret``, ``token``...
#: The name may be longer (``AWS_SECRET_ACCESS_KEY``, ``aws_session_token``, ``PGPASSWORD``,
#: ``AZURE_CLIENT_SECRET``, ``AccountKey``, ``DB_PASS``): the match starts at its last word.
_SECRET_NAME: Final = (
    r"(?:(?:api|access|account|secret|private|storage|subscription|master|signing|encryption)"
    r"[_-]?key|secret|token|passwd|password|passphrase|pwd|_pass)"
)
#: An optional quote around a name or value; in a JSON-escaped text (a JSON document captured
#: inside a JSON string, maybe several levels deep) the quote is escaped:
#: ``{\"password\": \"hunter22\"}``, ``{\\\"password\\\": ...}``.
_QUOTE: Final = r"""(?:\\*["'])?"""
_SECRET_KEEP: Final = re.compile(r"(?i)" + _QUOTE + _SECRET_NAME + _QUOTE + r"\s*[:=]\s*" + _QUOTE)
#: A credential assignment (the value: 4+ characters up to a space, quote, comma, semicolon,
#: ampersand or backslash, not starting a JSON array or object). The lookahead on the first
#: letters of the names lets the scan skip every other position at C speed (the match starts
#: inside the name: the rest of the name is kept).
_SECRET_PATTERN: Final = (
    r"(?=[aApPsStTmMeE_])(?i:" + _SECRET_NAME + r"\b" + _QUOTE + r"\s*[:=]\s*" + _QUOTE + r")"
    r"(?![\[{])[^\s\"',;&\\]{4,}"
)
_PASSWORD_LIKE: Final = re.compile(r"(?i)" + _QUOTE + r"(?:passwd|password|passphrase|pwd|_pass)")


def _secret_valid(matched: str) -> bool:
    kept = _SECRET_KEEP.match(matched)
    value = matched[kept.end() :] if kept else matched
    if _PASSWORD_LIKE.match(matched):
        return len(value) >= 4
    return len(value) >= 8 and shannon_entropy(value) >= 3.0


_DIGITS: Final = re.compile(r"\d+")


def _digit_group_runs(run: str) -> Iterator[tuple[int, int]]:
    """Spans of 13-19 digits made of whole neighbouring groups of a run of digit groups."""
    if len(run) < 13:
        return
    groups = [m.span() for m in _DIGITS.finditer(run)]
    for first, (start, _) in enumerate(groups):
        digits = 0
        for lo, hi in groups[first:]:
            digits += hi - lo
            if digits > 19:
                break
            if digits >= 13:
                yield start, hi


#: The user name of a URL's userinfo (kept: only the password is masked).
_URL_USER: Final = r"[^\s/?#@:\"'<>\\`]*"
_URL_KEEP: Final = re.compile(r"://" + _URL_USER + ":")
_NUMBERISH: Final = re.compile(r"[0-9][0-9 ().+-]{4,}[0-9]")
_IBAN_START: Final = re.compile(r"[A-Z]{2}[0-9]{2}")
_NINO_START: Final = re.compile(r"[A-Z]{2} ?[0-9]{2} ?[0-9]{2}")
_SECRET_WORDS: Final = ("key", "secret", "token", "pass", "pwd")
_AWS_PREFIXES: Final = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")
#: The words before HTTP Basic credentials: the header's name, a separator (``:``, ``=``, the
#: ``,`` of a pair), quotes (maybe escaped) and ``Basic`` (kept: only the credentials are
#: masked).
_BASIC_KEEP: Final = re.compile(
    r"(?i)authorization" + _QUOTE + r"\s*[:=,]?\s*" + _QUOTE + r"\s*basic\s+"
)
_BASIC_PATTERN: Final = (
    r"(?i:\bauthorization\b" + _QUOTE + r"\s*[:=,]?\s*" + _QUOTE + r"\s*basic)\s+"
    r"[A-Za-z0-9+/]{4,}={0,2}"
)
_SLACK_HOOK: Final = r"hooks\.slack\.com/(?:services|workflows|triggers)/"


_ASCII_DIGITS: Final = "0123456789"
#: byte -> 1 for the characters of a number run (``_NUMBERISH``), else 0
_RUN_BYTES: Final = bytes(int(chr(byte) in "0123456789 ().+-") for byte in range(256))
#: byte -> 1 for an ASCII digit, else 0
_DIGIT_BYTES: Final = bytes(int(chr(byte) in _ASCII_DIGITS) for byte in range(256))


def _holds(text: str, table: bytes, needle: bytes) -> bool:
    """Whether the UTF-8 of ``text`` translated by ``table`` holds ``needle``: a pass in C,
    many times cheaper than a regex search that has to try every position."""
    return needle in text.encode("utf-8", "surrogatepass").translate(table)


def _has_number_run(text: str) -> bool:
    """A run of 6+ digits/separators: cards, SSNs, NINOs and phone numbers all have one (the
    six characters are looked for first; ASCII, so six bytes of the UTF-8 too)."""
    return _holds(text, _RUN_BYTES, b"\1" * 6) and _NUMBERISH.search(text) is not None


def _has_iban_start(text: str) -> bool:
    return _holds(text, _DIGIT_BYTES, b"\1\1") and _IBAN_START.search(text) is not None


def _has_nino_start(text: str) -> bool:
    return (
        _holds(text, _DIGIT_BYTES, b"\1\1")
        and _NINO_START.search(text) is not None
        and _has_number_run(text)
    )


def _has_secret_word(text: str) -> bool:
    if "=" not in text and ":" not in text:
        return False
    low = text.lower()
    return any(word in low for word in _SECRET_WORDS)


#: Characters from the rarest to the most common in prose and code (one not listed counts as
#: rarer than all of them).
_RARITY: Final = (
    "zqxjZQXJ_|#@$%^&*~`<>[]{}\\;!?+=/:-\"'0123456789VKYWUBGFPMDCLHRNOSITAE"
    "vkbywgpfmuclhdrsnioate,. \n"
)


def _rarest(needle: str) -> str:
    """The rarest character of ``needle`` (see :data:`_RARITY`)."""
    return min(needle, key=_RARITY.find)


def _has(*needles: str) -> Callable[[str], bool]:
    """A trigger: whether ``text`` holds one of ``needles``. A search for one character is a
    ``memchr`` (many times faster than a search for a longer needle), so each needle is
    looked for only where its rarest character occurs, and all of them only where a
    character they all hold occurs."""
    guarded = tuple((_rarest(needle), needle) for needle in needles)
    # a character every needle holds (the "A" of the AWS prefixes) rules most text out at once
    shared = set(needles[0]).intersection(*needles[1:]) if needles else set()
    gate = _rarest("".join(sorted(shared))) if shared else ""

    def trigger(text: str) -> bool:
        if gate not in text:
            return False
        for rare, needle in guarded:  # noqa: SIM110 (a loop: no generator made per text)
            if rare in text and needle in text:
                return True
        return False

    return trigger


def _has_github_prefix(text: str) -> bool:
    # "gh" starts every prefix but that of fine-grained tokens, github_pat_
    return "_" in text and ("gh" in text or "github_pat_" in text)


def _basic_valid(matched: str) -> bool:
    """Whether the credentials after ``Basic`` are base64 of ``user:password``."""
    credentials = matched.rsplit(maxsplit=1)[-1]
    try:
        return b":" in base64.b64decode(credentials, validate=True)
    except ValueError:  # binascii.Error: not base64 (a word such as "authentication")
        return False


_GITLAB_PREFIX: Final = re.compile(r"gl(?:pat|ptt|dt|rt|cbt|ft|imt|soat|oas)-")


def _has_gitlab_prefix(text: str) -> bool:
    return "-" in text and _GITLAB_PREFIX.search(text) is not None


_has_fixed_prefix: Final = _has(
    *("xox", "xapp-", "hooks.slack.com/", "k_live_", "k_test_", "k_prod_", "whsec_", "AIza"),
    *("hf_", "npm_", "pypi-", "SG."),
)


def _has_token_prefix(text: str) -> bool:
    """The trigger shared by the token families known by a fixed prefix (Slack, Stripe,
    Google, Hugging Face, npm, PyPI, SendGrid, GitLab): evaluated once per text, most text
    holding none of them."""
    return _has_fixed_prefix(text) or _has_gitlab_prefix(text)


def _has_bearer(text: str) -> bool:
    return "bearer" in text.lower()


#: The built-in maskers, in the order they are tried at each position of the text.
BUILTIN_MASKERS: Final[Mapping[str, PatternMasker]] = {
    m.name: m
    for m in (
        PatternMasker(
            "private_key",
            # to its END line, or to the end of the text when that is missing (a key cut
            # off in an error message is a key all the same)
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END "
            r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
            trigger=_has("PRIVATE KEY"),
            anchors="-",
        ),
        PatternMasker(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
            trigger=_has("eyJ"),
            anchors="J",
        ),
        PatternMasker(
            "bearer_token",
            r"(?i:\bbearer)\s+[A-Za-z0-9._~+/-]{16,}=*",
            keep=r"(?i)bearer\s+",
            trigger=_has_bearer,
            anchors="bB",
        ),
        PatternMasker(
            "basic_auth",
            _BASIC_PATTERN,
            validate=_basic_valid,
            keep=_BASIC_KEEP,
            trigger=_has("uthorization", "UTHORIZATION"),
            anchors="zZ",
        ),
        PatternMasker(
            "openai_key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
            trigger=_has("sk-"),
            anchors="-",
        ),
        PatternMasker(
            "aws_access_key",
            r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[0-9A-Z])[0-9A-Z]{16}\b",
            trigger=_has(*_AWS_PREFIXES),
            anchors="".join(map(_rarest, _AWS_PREFIXES)),
        ),
        PatternMasker(
            "github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
            trigger=_has_github_prefix,
            anchors="_",
        ),
        PatternMasker(
            "gitlab_token",
            r"\b" + _GITLAB_PREFIX.pattern + r"[0-9A-Za-z_-]{20,}",
            trigger=_has_token_prefix,
            anchors="-",
        ),
        PatternMasker(
            "slack_token",
            r"\bxox[abeoprs](?:\.xox[bp])?-[0-9A-Za-z-]{10,}|\bxapp-\d-[0-9A-Za-z-]{10,}",
            trigger=_has_token_prefix,
            anchors="-",
        ),
        PatternMasker(
            "slack_webhook",
            _SLACK_HOOK + r"[A-Za-z0-9+/_-]{20,}",
            keep=_SLACK_HOOK,
            trigger=_has_token_prefix,
            anchors="/",
        ),
        PatternMasker(
            "stripe_key",
            r"\b(?:[sr]k_(?:live|test|prod)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z+/]{24,}={0,2})",
            trigger=_has_token_prefix,
            anchors="_",
        ),
        PatternMasker(
            "google_api_key",
            r"\bAIza[0-9A-Za-z_-]{35}",
            trigger=_has_token_prefix,
            anchors="z",
        ),
        PatternMasker(
            "huggingface",
            r"\bhf_[A-Za-z0-9]{34,}",
            trigger=_has_token_prefix,
            anchors="_",
        ),
        PatternMasker(
            "package_token",
            r"\bnpm_[A-Za-z0-9]{36}|\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
            trigger=_has_token_prefix,
            anchors="_-",
        ),
        PatternMasker(
            "sendgrid_key",
            r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
            trigger=_has_token_prefix,
            anchors="G",
        ),
        PatternMasker(
            "secret",
            _SECRET_PATTERN,
            validate=_secret_valid,
            keep=_SECRET_KEEP,
            trigger=_has_secret_word,
            anchors=":=",
        ),
        PatternMasker(
            "url_password",
            # scheme://user:password@host (any scheme and host); the last @ of the authority
            # ends the password, which may hold unescaped @ and : characters. The match
            # starts at :// (a literal: the scan skips to it at C speed)
            r"://" + _URL_USER + r":[^\s/?#\"'<>\\`]+(?=@)",
            keep=_URL_KEEP,
            trigger=_has("://"),
            anchors="@",
        ),
        PatternMasker(
            "email",
            r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
            r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b",
            trigger=_has("@"),
            anchors="@",
        ),
        PatternMasker(
            "iban",
            r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b",
            validate=iban_valid,
            trigger=_has_iban_start,
            anchors=_ASCII_DIGITS,
            min_anchors=2,
        ),
        PatternMasker(
            "credit_card",
            # a run of digit groups that is not part of a word or of a decimal number
            r"(?<![\w.,])\d+(?:[ -]\d+)*(?![\w]|[.,]\d)",
            validate=luhn_valid,
            trigger=_has_number_run,
            candidates=_digit_group_runs,
            anchors=_ASCII_DIGITS,
            min_anchors=2,
        ),
        PatternMasker(
            "us_ssn",
            r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b",
            trigger=_has_number_run,
            anchors=_ASCII_DIGITS,
            min_anchors=2,
        ),
        PatternMasker(
            "uk_nino",
            r"\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
            r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
            trigger=_has_nino_start,
            anchors=_ASCII_DIGITS,
            min_anchors=2,
        ),
        PatternMasker(
            "phone",
            r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{2,4}){2,5}\b"
            r"|(?<![\w(])\(\d{3}\) ?\d{3}[ .-]\d{4}\b"
            r"|(?<![\w.-])(?:\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4})\b(?![.-]\d)"
            r"|(?<![\w.-])0\d{2,4} \d{3,4} ?\d{3,4}\b(?![.-]\d)"
            r"|(?<![\w.-])0[1-9](?:(?: \d{2}){4}|(?:\.\d{2}){4})\b(?![.-]\d)",
            validate=_phone_valid,
            trigger=_has_number_run,
            anchors=_ASCII_DIGITS,
            min_anchors=2,
        ),
    )
}


class Redactor:
    """Mask sensitive text with a set of maskers; callable as ``Settings.redact``.

    Each :class:`PatternMasker` whose anchors are in the text and whose cheap trigger fires
    on it scans it; the union of the spans they find is masked, so overlapping finds of
    different kinds are all masked. The anchors of every masker are looked for in one pass
    over the text: text holding none of them (most prose) costs that pass and nothing else
    (see :meth:`may_change`). Calling the redactor returns ``(masked_text, names_fired)``.

    Args:
        maskers: the maskers, in priority order (default: all of :data:`BUILTIN_MASKERS`).

    Raises:
        ValueError: two maskers share a name.
    """

    def __init__(self, maskers: Iterable[Masker] | None = None) -> None:
        chosen: list[Masker] = list(BUILTIN_MASKERS.values() if maskers is None else maskers)
        names = [m.name for m in chosen]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate masker names: {duplicates}")
        self._maskers: tuple[Masker, ...] = tuple(chosen)
        self._patterns: tuple[PatternMasker, ...] = tuple(
            m for m in chosen if isinstance(m, PatternMasker)
        )
        self._pattern_names = tuple(m.name for m in self._patterns)
        # the pattern maskers grouped by trigger (a trigger shared by several maskers is
        # evaluated once per text), in order of first use; a group's anchors are those of its
        # maskers ("": one of them has none, or one that is not ASCII: always considered)
        groups: list[tuple[Callable[[str], bool] | None, list[int]]] = []
        for index, masker in enumerate(self._patterns):
            trigger = masker.trigger
            shared = [g for g in groups if trigger is not None and g[0] is trigger]
            if shared:
                shared[0][1].append(index)
            else:
                groups.append((trigger, [index]))
        self._groups = tuple(
            (_group_anchors([self._patterns[i] for i in indices]), trigger, tuple(indices))
            for trigger, indices in groups
        )
        #: group -> the bytes that are not its anchors, for the groups whose maskers all need
        #: two or more of them (a text holding one is left out: a title with one digit)
        self._paired_groups = {
            g: bytes(byte for byte in range(256) if chr(byte) not in group_anchors)
            for g, (group_anchors, _, indices) in enumerate(self._groups)
            if group_anchors and all(self._patterns[i].min_anchors >= 2 for i in indices)
        }
        self._others: tuple[Masker, ...] = tuple(
            m for m in chosen if not isinstance(m, PatternMasker)
        )
        anchors = {ord(a) for group in self._groups for a in group[0]}
        paired = {  # anchors of maskers that all need two or more of them
            byte
            for byte in anchors
            if all(m.min_anchors >= 2 for m in self._patterns if chr(byte) in m.anchors)
        }
        #: byte -> 1 for an anchor, 2 for a paired one (a text holding one of them and no
        #: other anchor cannot change: a title with one digit), 3 for the separator
        separator = ord(_SEPARATOR)
        self._table = bytes(
            ((2 if byte in paired else 1) if byte in anchors else 3 if byte == separator else 0)
            for byte in range(256)
        )
        #: the bytes deleted from a text to leave the anchors it holds, and from texts
        #: scanned together to leave their anchors and the separators between them
        self._not_anchors = bytes(byte for byte in range(256) if byte not in anchors)
        self._not_scanned = bytes(
            byte for byte in range(256) if byte not in anchors and byte != separator
        )
        #: anchor -> the groups it lets in; the groups without anchors, always considered
        self._by_anchor = {
            byte: frozenset(g for g, group in enumerate(self._groups) if chr(byte) in group[0])
            for byte in anchors
        }
        self._unanchored = frozenset(g for g, group in enumerate(self._groups) if not group[0])
        self._always = bool(self._others or self._unanchored)
        self._plans: dict[bytes, tuple[tuple[Callable[[str], bool] | None, tuple[int, ...]], ...]]
        self._plans = {}

    @classmethod
    def default(cls) -> Redactor:
        """A redactor with every built-in masker (one shared instance: a redactor never
        changes, and what is cached per redactor, such as masked mapping keys, survives a
        new ``configure()``)."""
        if cls is not Redactor:
            return cls()
        if _DEFAULT.redactor is None:
            _DEFAULT.redactor = cls()
        return _DEFAULT.redactor

    @classmethod
    def builtins(cls, names: Iterable[str]) -> Redactor:
        """A redactor with the named built-in maskers only.

        Raises:
            ValueError: a name is not a built-in masker.
        """
        wanted = list(names)
        unknown = [n for n in wanted if n not in BUILTIN_MASKERS]
        if unknown:
            raise ValueError(f"unknown built-in maskers {unknown}; known: {list(BUILTIN_MASKERS)}")
        return cls([m for n, m in BUILTIN_MASKERS.items() if n in wanted])

    @property
    def maskers(self) -> tuple[Masker, ...]:
        """The maskers in priority order."""
        return self._maskers

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the maskers."""
        return tuple(m.name for m in self._maskers)

    def with_maskers(self, *extra: Masker) -> Redactor:
        """A new redactor with ``extra`` maskers tried *before* the current ones."""
        return Redactor([*extra, *self._maskers])

    def may_change(self, text: str, *, triggers: bool = True) -> bool:
        """Whether masking ``text`` may change it: False when it is empty, holds no anchor of
        any masker (one pass over the text in C, far cheaper than masking it), or none of the
        triggers of the maskers its anchors let in fires (a title with one digit: the AWS
        prefix ``A3T`` is not in it), so nothing can be found in it. True says only that the
        maskers have to look. ``triggers=False``: the anchors alone (a JSON text, whose
        string literals are masked run by run: its numbers would set off the triggers of
        the number maskers over the whole text)."""
        if self._always:
            return bool(text)
        encoded = text.encode("utf-8", "surrogatepass")
        hits = encoded.translate(self._table)  # as in may_change_each
        if 1 not in hits and hits.count(2) < 2:
            return False
        return not triggers or self._fires(text, encoded.translate(None, self._not_anchors))

    def may_change_each(self, texts: Sequence[str]) -> list[bool]:
        """:meth:`may_change` of each of ``texts``, all looked at in one pass in C (the texts
        of a span: most of them, or all, hold no anchor)."""
        if self._always:
            return [bool(text) for text in texts]
        count = len(texts)
        # the anchors of each text and the separators between them, all other bytes deleted
        held = (
            _SEPARATOR.join(texts)
            .encode("utf-8", "surrogatepass")
            .translate(None, self._not_scanned)
        )
        suspect = [False] * count
        if len(held) < count:  # the separators alone: no text holds an anchor (most spans)
            return suspect
        if held.count(_SEPARATOR_BYTE) != count - 1:  # a text holds it: each on its own
            return [self.may_change(text) for text in texts]
        # 1: an anchor a masker needing one of them has, 2: another, 3: a separator; a text
        # may change when it holds a 1 or two anchors (its bytes between separators are all
        # anchors): either way, a 1 once two 2s in a row are marked so
        marked = held.translate(self._table).replace(b"\2\2", b"\1")
        if 1 not in marked:  # anchors that need another, one in a text (a title's digit)
            return suspect
        parts = held.split(_SEPARATOR_BYTE)
        hit = marked.find(1)
        while hit >= 0:  # each text that may change (its index: the separators before it)
            index = marked.count(3, 0, hit)
            suspect[index] = self._fires(texts[index], parts[index])
            end = marked.find(3, hit)
            hit = marked.find(1, end + 1) if end >= 0 else -1
        return suspect

    def _fires(self, text: str, held: bytes) -> bool:
        """Whether a masker the anchors ``held`` by ``text`` let in may find something in
        it: one without a trigger, or one whose trigger fires (each trigger as
        :meth:`__call__` evaluates it)."""
        for trigger, _ in self._plan(held):  # noqa: SIM110 (no generator made per text)
            if trigger is None or trigger(text):
                return True
        return False

    def _plan(
        self, held: bytes
    ) -> tuple[tuple[Callable[[str], bool] | None, tuple[int, ...]], ...]:
        """The groups of pattern maskers (trigger, indices) to consider, in priority order, for
        a text holding the anchors ``held`` (in order, repeats kept): those of the anchors it
        holds (a group whose maskers all need two of its anchors: when it holds two) and
        those without anchors."""
        plan = self._plans.get(held)
        if plan is None:
            groups = self._unanchored.union(*map(self._by_anchor.__getitem__, set(held)))
            paired = self._paired_groups
            plan = tuple(
                self._groups[g][1:]
                for g in sorted(groups)
                if g not in paired or len(held.translate(None, paired[g])) > 1
            )
            if len(held) <= _PLAN_KEY:
                if len(self._plans) >= _PLANS:
                    self._plans.clear()
                self._plans[held] = plan
        return plan

    def __call__(self, text: str) -> tuple[str, tuple[str, ...]]:
        """Mask ``text``; return the masked text and the sorted names of the maskers that fired."""
        if not text:
            return text, ()
        fired: set[str] = set()
        # the anchors the text holds choose the maskers (text holding none, most prose: none)
        held = text.encode("utf-8", "surrogatepass").translate(None, self._not_anchors)
        spans = [
            (lo, hi, index)
            for trigger, indices in self._plan(held)
            if trigger is None or trigger(text)
            for index in indices
            for lo, hi in self._patterns[index].spans(text)
        ]
        if spans:
            fired.update(self._pattern_names[index] for _, _, index in spans)
            text = _replace(text, spans, self._pattern_names)
        for masker in self._others:
            masked = masker.mask(text)
            if masked != text:
                fired.add(masker.name)
                text = masked
        return text, tuple(sorted(fired))


def _group_anchors(maskers: list[PatternMasker]) -> str:
    """The anchors of a group of maskers scanned together: every one's, or "" when one of
    them has none or one that is not ASCII (the group is then always considered)."""
    if any(not m.anchors or not m.anchors.isascii() for m in maskers):
        return ""
    return "".join(sorted({a for m in maskers for a in m.anchors}))


class _Default:
    """Holds the shared default redactor, built on first use."""

    __slots__ = ("redactor",)

    def __init__(self) -> None:
        self.redactor: Redactor | None = None


_DEFAULT: Final = _Default()
